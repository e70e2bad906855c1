#!/usr/bin/env bash
# Regenerates firefox-schema.json beside this script: a JSON Schema (draft-07) of the
# Firefox Profiler's processed profile (its `Profile` type and what it references), made
# from the profiler's own type definitions at the last commit whose
# PROCESSED_PROFILE_VERSION is 55, the version fxprof-processed-profile 0.8 writes.
#
# The profiler (https://github.com/firefox-devtools/profiler, MPL-2.0) was written in
# Flow at that version, so its types are converted to TypeScript with
# @khanacademy/flow-to-ts, four conversion gaps are patched (below, each as the
# profiler's own later TypeScript port wrote it), tsc type-checks the result, and
# ts-json-schema-generator writes the schema. Exact Flow object types ({| |}) become
# `additionalProperties: false`, the generator's default for every object type; the
# script fails if the schema holds a Flow object type that is *not* exact (and has no
# indexer), which that default would make stricter than the profiler.
#
# Needs git, node (20 works, though the generator asks for 22), npm and the network
# (npm packages and, unless PROFILER_GIT names a clone, a clone of the profiler).
# The tests do not run this: they read the vendored schema.
#
#   PROFILER_GIT=/path/to/profiler/.git perfdata-cli/tests/exports/firefox-schema.sh
set -euo pipefail

COMMIT=d3ec175cc6f510de747409da4ca117fe3cd06de9
VERSION=55
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git_dir=${PROFILER_GIT:-}
if [ -z "$git_dir" ]; then
    git clone --quiet --bare --filter=blob:none \
        https://github.com/firefox-devtools/profiler "$work/profiler.git"
    git_dir=$work/profiler.git
fi
show() { git --git-dir="$git_dir" show "$COMMIT:$1"; }

# The commit must be the one whose processed format is the version we write.
show src/app-logic/constants.js | grep -q "PROCESSED_PROFILE_VERSION = $VERSION;"

mkdir -p "$work/flow" "$work/ts"
for f in profile markers gecko-profile units utils; do
    show "src/types/$f.js" >"$work/flow/$f.js"
done

cd "$work"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund @khanacademy/flow-to-ts@0.5.2 \
    ts-json-schema-generator@2.9.0 typescript@5.9.3 @babel/parser@7.29.15

cp flow/*.js ts/
(cd ts && ../node_modules/.bin/flow-to-ts --write --delete-source ./*.js 2>/dev/null)

node - <<'EOF'
// Patch what flow-to-ts leaves for Flow-only constructs; none of them is in the Profile
// type's closure except ObjectMap, and tsc must pass over all five files.
const fs = require('fs');
const patch = (file, from, to) => {
  const text = fs.readFileSync(file, 'utf8');
  if (!text.match(from)) throw new Error(`${file}: ${from} not found`);
  fs.writeFileSync(file, text.replace(from, to));
};
// Flow's `__proto__: null` says "made by Object.create(null)": no JSON property. The
// profiler's TypeScript port writes ObjectMap<T> as { [key: string]: T }.
patch('ts/utils.ts', /  \/\/ No prototype was created:\n  __proto__: null;\n/, '');
// $ReturnType needs utility-types' $Call; nothing in the profile uses it.
patch('ts/utils.ts', /import \{ \$Call \} from "utility-types";\n/, '');
patch('ts/utils.ts', /export type ExtractReturnType = .*\n/, '');
patch('ts/utils.ts', /export type \$ReturnType<Fn> = .*\n/, '');
// $Diff<T, {cause: any}> is Omit<T, "cause"> (as the port writes it).
patch('ts/markers.ts', /import \{ \$Diff \} from "utility-types";\n/, '');
patch('ts/markers.ts', /\$Diff<T, \/\/ Remove the cause property\.\n\{\n  cause: any;\n\}>/,
  'Omit<T, "cause">');
// MixedObject is a Flow global in the profiler's libdefs; utils.ts defines it.
patch('ts/markers.ts', 'import type { ObjectMap } from "./utils";',
  'import type { ObjectMap, MixedObject } from "./utils";');
EOF

cat >ts/tsconfig.json <<'EOF'
{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2020",
  "module": "esnext", "moduleResolution": "node"}, "include": ["*.ts"]}
EOF
node_modules/.bin/tsc -p ts
node_modules/.bin/ts-json-schema-generator --path ts/profile.ts --type Profile \
    --tsconfig ts/tsconfig.json --jsDoc none -o raw.json

COMMIT=$COMMIT VERSION=$VERSION node - "$here/firefox-schema.json" <<'EOF'
const fs = require('fs');
const {parse} = require('@babel/parser');
const schema = JSON.parse(fs.readFileSync('raw.json', 'utf8'));
// Inexact Flow object types without an indexer accept more properties than the
// schema's additionalProperties: false; none may be in the Profile's closure.
for (const f of fs.readdirSync('flow')) {
  const ast = parse(fs.readFileSync(`flow/${f}`, 'utf8'), {sourceType: 'module', plugins: ['flow']});
  for (const n of ast.program.body) {
    const decl = n.type === 'ExportNamedDeclaration' ? n.declaration : n;
    if (!decl || decl.type !== 'TypeAlias') continue;
    const seen = [];
    (function walk(x) {
      if (!x || typeof x.type !== 'string') return;
      if (x.type === 'ObjectTypeAnnotation' && !x.exact && x.indexers.length === 0) seen.push(x);
      for (const [k, v] of Object.entries(x)) {
        if (k === 'loc') continue;
        if (Array.isArray(v)) v.forEach(walk); else if (v && typeof v === 'object') walk(v);
      }
    })(decl.right);
    if (seen.length && Object.keys(schema.definitions).some(d => d.split('<')[0] === decl.id.name)) {
      throw new Error(`${decl.id.name} (${f}) is an inexact object type`);
    }
  }
}
const out = {
  $comment: `Generated by firefox-schema.sh from the Firefox Profiler's type definitions ` +
    `(github.com/firefox-devtools/profiler, src/types/*.js at commit ${process.env.COMMIT}, ` +
    `PROCESSED_PROFILE_VERSION ${process.env.VERSION}; Mozilla Public License 2.0): ` +
    `flow-to-ts 0.5.2, then ts-json-schema-generator 2.9.0 --type Profile --jsDoc none.`,
  ...schema,
};
fs.writeFileSync(process.argv[2], JSON.stringify(out, null, 1) + '\n');
EOF
echo "wrote $here/firefox-schema.json"
