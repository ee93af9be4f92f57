#!/usr/bin/env node
// The repository stands on its own: no file cites a path or a document outside it, and every
// `docs/karpenter/<page>.md §N` citation names a section that exists.
//
// Outside the repository (a failure wherever it appears):
// - `spec/<page>.md`, `test-catalog`, `stack-notes`: documents that are not in the repo. Karpenter's behaviour by
//   case is in docs/karpenter/ (same section numbers), the stack's sharp edges in docs/stack.md;
// - `../shared`, `shared/{docs,data,seed,hooks}`, `seed/examples/`, `/work/...`: files next to a checkout, not in it;
// - `DESIGN.md`, `STYLE.md`, `USERS.md` unless such a file is committed.
// Files: everything git knows (tracked, or untracked and not ignored), so node_modules, dist and build output are
// never read. Exits 1 with one `file:line: what` per finding.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const self = 'scripts/check-citations.mjs';

const OUTSIDE = [
  [/(?<![\w-])spec\/[\w-]+\.md/g, 'cites a spec page outside the repo (use docs/karpenter/<page>.md)'],
  [/(?<![\w/-])test-catalog(?![\w-])/g, 'cites the test catalog outside the repo (use docs/karpenter/test-cases.md)'],
  [/(?<![\w/-])stack-notes(?![\w-])/g, 'cites stack notes outside the repo (use docs/stack.md)'],
  [/(?:\.\.\/)+shared(?![\w-])/g, 'reaches ../shared outside the repo'],
  [/(?<![\w./-])shared\/(?:docs|data|seed|hooks)\b/g, 'cites a shared/ folder outside the repo'],
  [/(?<![\w.-])\/work\/[\w.]/g, 'names an absolute path of this machine'],
  [/(?<![\w./-])seed\/examples\//g, "cites the guide's seed folder outside the repo (use examples/guide/)"],
];
const MAYBE_OUTSIDE = /(?<![\w-])(?:docs\/)?(?:DESIGN|STYLE|USERS)\.md/g;
const KARPENTER_CITE = /docs\/karpenter\/([\w-]+)\.md`?\s?§\s?([0-9A-Z](?:[0-9.]*[0-9])?)/g;
const BINARY = /\.(wasm|png|jpe?g|gif|ico|gz|zip|tgz|br|woff2?)$/i;

function repoFiles() {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root });
  return [...new Set(out.toString('utf8').split('\0').filter(Boolean))].sort();
}

const sectionCache = new Map();
/** The section numbers of a docs/karpenter page: "2.5.1" for "#### 2.5.1 ...", "A" for "## Appendix A ...". */
function sections(page) {
  if (!sectionCache.has(page)) {
    const path = join(root, 'docs/karpenter', `${page}.md`);
    const found = new Set();
    if (existsSync(path)) {
      for (const m of readFileSync(path, 'utf8').matchAll(
        /^#+\s+(?:Appendix\s+)?([0-9A-Z](?:[0-9.]*[0-9])?)\.?[\s—-]/gm,
      ))
        found.add(m[1]);
    }
    sectionCache.set(page, existsSync(path) ? found : undefined);
  }
  return sectionCache.get(page);
}

/** A section exists, or (for a numbered step inside a section, e.g. §4.5 under "## 4.") its parent does. */
function sectionExists(found, n) {
  if (found.has(n)) return true;
  const parent = n.includes('.') ? n.slice(0, n.lastIndexOf('.')) : undefined;
  return parent !== undefined && found.has(parent) && !n.slice(parent.length + 1).includes('.');
}

const problems = [];
for (const file of repoFiles()) {
  if (file === self || BINARY.test(file)) continue;
  const path = join(root, file);
  if (!existsSync(path)) continue; // deleted in the work tree, not yet committed
  const text = readFileSync(path, 'utf8');
  if (text.includes('\0')) continue;
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const where = `${file}:${i + 1}`;
    for (const [re, what] of OUTSIDE) for (const m of line.matchAll(re)) problems.push(`${where}: ${what}: ${m[0]}`);
    for (const m of line.matchAll(MAYBE_OUTSIDE)) {
      if (!existsSync(join(root, m[0]))) problems.push(`${where}: cites ${m[0]}, which is not in the repo`);
    }
    for (const m of line.matchAll(KARPENTER_CITE)) {
      const found = sections(m[1]);
      if (found === undefined) problems.push(`${where}: docs/karpenter/${m[1]}.md does not exist`);
      else if (!sectionExists(found, m[2]))
        problems.push(`${where}: docs/karpenter/${m[1]}.md has no section §${m[2]}`);
    }
  });
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`check-citations: ${problems.length} citation(s) of things outside the repository`);
  process.exit(1);
}
console.log('check-citations: ok');
