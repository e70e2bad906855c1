#!/bin/bash
# Run each fuzz target for $1 seconds (default 900), niced, seeded with the fixtures and
# the corpus files under 60 KB; logs and a summary in $FUZZ_LOGS (/tmp/fuzzwork).
cd "$(dirname "$0")"
T=${1:-900}
mkdir -p "${FUZZ_LOGS:-/tmp/fuzzwork}"
mkdir -p corpus/seed corpus/synth corpus/unwind
cp seeds/unwind/* corpus/unwind/
cp ../fixtures/*.data corpus/seed/ 2>/dev/null
find ${PERFDATA_CORPUS:-../../shared/corpus} -maxdepth 1 -type f -size -60k -name '*data*' -exec cp {} corpus/seed/ \;
export RUSTC_BOOTSTRAP=1
nice -n 19 cargo fuzz build --sanitizer none > ${FUZZ_LOGS:-/tmp/fuzzwork}/build.log 2>&1 || exit 1
for t in read convert check strip synth unwind; do
  mkdir -p corpus/$t
  case $t in synth|unwind) seeds=corpus/$t ;; *) seeds=corpus/seed ;; esac
  nice -n 19 cargo fuzz run --sanitizer none $t corpus/$t $seeds -- -max_total_time=$T -max_len=65536 -print_final_stats=1 > ${FUZZ_LOGS:-/tmp/fuzzwork}/$t.log 2>&1
  echo "$t exit $?" >> ${FUZZ_LOGS:-/tmp/fuzzwork}/summary
done
