#!/usr/bin/env node
// Finds import circles between the project's source files (tests excluded): files that import each other,
// directly or through others, cannot be read, tested or moved one at a time. Type-only imports count: a
// circle through types is still two files that only make sense together. Every strongly connected
// component of the import graph with more than one file is reported with one circle through it.
// Exits 1 when there is any.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const DIRS = ['solver-as', 'engine', 'controller', 'sim', 'cli', 'bench', 'scripts', 'bin'];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'build' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|mjs|js)$/.test(name) && !name.endsWith('.d.ts') && !/\.test\.ts$/.test(name)) out.push(p);
  }
  return out;
}

const importRe =
  /(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[^.\w])import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;
const stripComments = (t) => t.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

const files = DIRS.flatMap((d) => {
  try {
    return walk(join(root, d));
  } catch (e) {
    if (e.code === 'ENOENT') return [];
    throw e;
  }
});
const known = new Set(files);
const edges = new Map();
for (const f of files) {
  const out = new Set();
  for (const m of stripComments(readFileSync(f, 'utf8')).matchAll(importRe)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec.startsWith('.')) continue;
    const target = resolve(dirname(f), spec);
    if (known.has(target) && target !== f) out.add(target);
  }
  edges.set(f, [...out].sort());
}

// Tarjan's strongly connected components, iteratively (deep import chains would overflow the stack).
function components() {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  for (const start of files) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const [v, i] = frame;
      const succ = edges.get(v);
      if (i < succ.length) {
        frame[1]++;
        const w = succ[i];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        const scc = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1) out.push(scc);
      }
    }
  }
  return out;
}

/** One circle through `scc`: a shortest path back to its first file. */
function circle(scc) {
  const inside = new Set(scc);
  const start = [...scc].sort()[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of edges.get(v)) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x = v; x !== start; x = prev.get(x)) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return scc;
}

const found = components();
for (const scc of found)
  console.error(
    `import circle (${scc.length} files): ${circle(scc)
      .map((f) => relative(root, f))
      .join(' -> ')}`,
  );
if (found.length) {
  console.error(`lint-cycles: ${found.length} circle(s)`);
  process.exit(1);
}
console.log('lint-cycles: ok');
