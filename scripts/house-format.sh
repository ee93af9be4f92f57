#!/usr/bin/env bash
# The one whole-tree formatting commit (the lead runs this once, on a frozen main, from the repository root or
# anywhere inside it):
#   1. `biome check --write`: formats every file biome.json covers and applies the linter's SAFE fixes only
#      (never --unsafe), so nothing changes meaning;
#   2. `biome lint`: reports what is left, by rule and file, and the count.
# It does not commit: review `git diff --stat`, run `npm test`, commit. Exit status: 0 when no finding is left.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
biome=node_modules/.bin/biome
[ -x "$biome" ] || { echo "house-format: $biome is missing: run npm ci first" >&2; exit 2; }

before=$(git diff --name-only | wc -l)
"$biome" check --write --max-diagnostics=0 . >/dev/null 2>&1 || true
changed=$(( $(git diff --name-only | wc -l) - before ))

report=$(mktemp)
trap 'rm -f "$report"' EXIT
"$biome" lint --reporter=json --max-diagnostics=100000 . >"$report" 2>/dev/null || true
node - "$report" <<'JS'
const { readFileSync } = require('node:fs');
const d = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byRule = new Map();
for (const x of d.diagnostics) {
  const p = x.location?.path;
  const file = typeof p === 'string' ? p : p?.file;
  const list = byRule.get(x.category) ?? [];
  list.push(file);
  byRule.set(x.category, list);
}
for (const [rule, files] of [...byRule].sort((a, b) => b[1].length - a[1].length)) {
  console.log(`${String(files.length).padStart(5)}  ${rule}  ${[...new Set(files)].slice(0, 6).join(', ')}`);
}
JS
findings=$(node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).summary; console.log(s.errors+s.warnings+s.infos)' "$report")
echo "house-format: ${changed} files reformatted or fixed; ${findings} lint findings remain"
[ "$findings" -eq 0 ]
