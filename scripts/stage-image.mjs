#!/usr/bin/env node
// `node scripts/stage-image.mjs OUT [--no-install]`: assembles in OUT the tree the container image holds
// under /app (deploy/Dockerfile runs it in its build stage and copies OUT into the runtime stage):
//
//   package.json, package-lock.json   (npm ci --omit=dev needs them; the version label reads package.json)
//   bin/karpenter-ts.mjs              (the entrypoint)
//   dist/                             (npm run build) without the simulator (dist/sim, its scenarios and the
//                                     `sim` command) and without source maps
//   node_modules/                     production dependencies only: npm ci --omit=dev --ignore-scripts, then
//                                     pruned to the packages the bundles load from outside (scripts/external.mjs)
//                                     and what those depend on: the rest is inside the bundles
//
// then prints the size of each part (bytes of the files, as `du --apparent-size` counts them). Run outside
// Docker it computes what the image adds to its base image (README quotes it). --no-install skips npm ci.
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dependencyClosure, EXTERNAL, pruneModules } from './external.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** dist/ paths (relative to dist/) that only the simulator uses: `npm start`, never the image. */
const SIMULATOR = ['sim', 'scenarios', 'cli/commands/sim.js'];

function usage(msg) {
  console.error(`stage-image: ${msg}\nusage: node scripts/stage-image.mjs OUT [--no-install]`);
  process.exit(2);
}

function keepInDist(rel) {
  if (rel.endsWith('.map')) return false;
  return !SIMULATOR.some((p) => rel === p || rel.startsWith(`${p}/`) || rel === `${p}.map`);
}

function copyDist(out) {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'BUILD'))) usage('dist/ is not built: run `npm run build` first');
  cpSync(dist, join(out, 'dist'), {
    recursive: true,
    filter: (src) => src === dist || keepInDist(relative(dist, src)),
  });
}

function install(out) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: out,
    stdio: 'inherit',
  });
  if (r.status !== 0) usage('npm ci --omit=dev failed');
  const modules = join(out, 'node_modules');
  for (const name of EXTERNAL)
    if (!existsSync(join(modules, name, 'package.json'))) usage(`${name} was not installed: is it still a dependency?`);
  const removed = pruneModules(modules, dependencyClosure(modules, EXTERNAL));
  console.log(
    `stage-image: node_modules pruned to ${EXTERNAL.join(', ')} and their dependencies (${removed} packages removed)`,
  );
}

function bytes(p) {
  const st = lstatSync(p);
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const name of readdirSync(p)) n += bytes(join(p, name));
  return n;
}

function report(out) {
  const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  const parts = readdirSync(out)
    .map((name) => ({ name, size: bytes(join(out, name)) }))
    .sort((a, b) => b.size - a.size);
  for (const p of parts) console.log(`${p.name.padEnd(20)} ${mib(p.size).padStart(10)}`);
  console.log(`${'total'.padEnd(20)} ${mib(parts.reduce((s, p) => s + p.size, 0)).padStart(10)}`);
  const modules = join(out, 'node_modules');
  if (existsSync(modules)) {
    const top = readdirSync(modules)
      .filter((n) => !n.startsWith('.'))
      .flatMap((n) => (n.startsWith('@') ? readdirSync(join(modules, n)).map((m) => `${n}/${m}`) : [n]));
    const biggest = top
      .map((n) => ({ n, size: bytes(join(modules, n)) }))
      .sort((a, b) => b.size - a.size)
      .slice(0, 8);
    console.log(
      `node_modules: ${top.length} packages; largest: ${biggest.map((b) => `${b.n} ${mib(b.size)}`).join(', ')}`,
    );
  }
}

let args;
try {
  args = parseArgs({ allowPositionals: true, options: { 'no-install': { type: 'boolean' } } });
} catch (e) {
  usage(e.message);
}
const [target, ...extra] = args.positionals;
if (!target) usage('OUT is required');
if (extra.length) usage(`one OUT folder, got ${args.positionals.length}`);
const out = resolve(target);
// OUT is replaced: refuse the checkout itself, a folder above it, or a non-empty folder that is not a staged tree.
if (
  !relative(out, root).startsWith('..') ||
  (existsSync(out) && readdirSync(out).length > 0 && !existsSync(join(out, 'bin', 'karpenter-ts.mjs')))
)
  usage(`${out} must be a new or empty folder, or an earlier staged tree`);
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'bin'), { recursive: true });
for (const f of ['package.json', 'package-lock.json']) cpSync(join(root, f), join(out, f));
cpSync(join(root, 'bin', 'karpenter-ts.mjs'), join(out, 'bin', 'karpenter-ts.mjs'));
copyDist(out);
if (!args.values['no-install']) install(out);
report(out);
