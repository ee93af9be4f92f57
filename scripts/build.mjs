#!/usr/bin/env node
// `npm run build:js` (part of `npm run build`, which `npm ci` runs through `prepare`): compiles the runtime
// (engine/, controller/, sim/, cli/ and what they import, tests excluded) into dist/ with tsc
// (tsconfig.build.json: rewriteRelativeImportExtensions turns the sources' `.ts` specifiers into `.js`), then
// copies the files the compiled code reads by path at run time, keeping their places relative to it.
// dist/ is rebuilt from scratch each time, so no output of a deleted source survives. The WebAssembly solver
// must be built first (`npm run build:wasm`): the engine imports it as solver-as/build/embedded.ts.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/**
 * Read at run time by path, relative to the compiled module that reads them:
 * - the guide's NodePool (cli/whatif/job.ts: what-if without --nodepools) and the other guide examples
 *   the scenarios apply;
 * - the simulator's scenarios (cli/commands/sim.ts: the default scenario and the files it applies).
 */
const ASSETS = [
  { from: 'examples/guide', match: /\.yaml$/ },
  { from: 'scenarios', match: /\.yaml$/ },
];

function compile() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('build: tsc failed');
    process.exit(r.status ?? 1);
  }
}

function files(dir, match, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, match, out);
    else if (match.test(name)) out.push(p);
  }
  return out;
}

function copyAssets() {
  let n = 0;
  for (const { from, match } of ASSETS) {
    for (const file of files(join(root, from), match)) {
      cpSync(file, join(dist, relative(root, file)));
      n++;
    }
  }
  return n;
}

if (!existsSync(join(root, 'solver-as', 'build', 'embedded.ts'))) {
  console.error('build: solver-as/build/embedded.ts is missing: run `npm run build:wasm` first (or `npm run build`)');
  process.exit(1);
}
const started = performance.now();
rmSync(dist, { recursive: true, force: true });
compile();
const assets = copyAssets();
// bin/karpenter-ts.mjs compares the sources' times with this file's to warn about a stale build.
writeFileSync(join(dist, 'BUILD'), `built ${new Date().toISOString()} by scripts/build.mjs\n`);
console.log(
  `build: dist/ compiled, ${assets} assets copied, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
