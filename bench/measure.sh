# measure CMD...: run CMD RUNS times (its output file $out removed and the disk synced
# before each run, stdout and stderr discarded) and set MEDIAN (median wall seconds, to
# the millisecond), CPU (median user + system seconds: on a loaded machine the wall time
# says more about the others than about CMD) and RSS_MIB (the largest peak RSS). Needs
# RUNS, out and BENCH_DIR.
# Sourced by common.sh and scale.sh.
measure() {
    local times=() cpus=() rss=0 start end kb
    for _ in $(seq "$RUNS"); do
        rm -f "$out"; sync
        start=$(date +%s%N)
        /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%U %S %M' "$@" >/dev/null 2>&1
        end=$(date +%s%N)
        # Wall time to the millisecond (time's %e has hundredths).
        times+=("$(awk -v n=$((end - start)) 'BEGIN { printf "%.3f", n / 1e9 }')")
        kb=$(tail -n 1 "$BENCH_DIR/time.txt" | awk '{ print $3 }')
        cpus+=("$(tail -n 1 "$BENCH_DIR/time.txt" | awk '{ printf "%.2f", $1 + $2 }')")
        [ "$kb" -gt "$rss" ] && rss=$kb
    done
    MEDIAN=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
    CPU=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
    RSS_MIB=$(( rss / 1024 ))
}
