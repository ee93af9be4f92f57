#!/usr/bin/env node
// `node scripts/module-memory.mjs [--worker] [--runs N] MODULE...`: what loading a module costs a thread, memory
// only. Each run is a fresh `node --expose-gc` process that imports MODULE (a path or file URL; a compiled file of
// dist/, usually), forces a full collection and prints V8's heap and code statistics and the process's memory;
// with several MODULEs the runs alternate between them (A B A B ...), and the medians of N runs (default 5) are
// printed per module, so two trees compare in one go:
//
//   node scripts/module-memory.mjs /tmp/base/dist/cli/commands/controller.js dist/cli/commands/controller.js
//
// --worker imports MODULE in a worker thread instead, started as the engine's pool starts its workers (with the
// workerData engine/pool/pool.ts gives them: the solver's release wasm of MODULE's own tree, compiled here, and the
// pool's defaults), and reports that thread's isolate: for the engine's worker file (dist/engine/pool/
// engine.worker.js). The process's RSS then includes the main thread, which holds only this script.
//
// Figures: heapUsed (live objects after the collection), codeAndMetadata (compiled code and its metadata),
// bytecodeAndMetadata (interpreter bytecode), externalScriptSource (source text held outside the heap), in MiB;
// rss and the whole process's heapUsed from process.memoryUsage(). Only loading is measured: no module's work
// runs beyond what its top level does (the controller's command module, for one, only defines its `run`).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { getHeapCodeStatistics, getHeapStatistics } from 'node:v8';

const MiB = 1024 * 1024;
const FIELDS = ['heapUsed', 'codeAndMetadata', 'bytecodeAndMetadata', 'externalScriptSource', 'rss', 'processHeapUsed'];

/** The measure of this thread's isolate (called after the import and a full collection). */
function isolateFigures() {
  const heap = getHeapStatistics();
  const code = getHeapCodeStatistics();
  return {
    heapUsed: heap.used_heap_size / MiB,
    codeAndMetadata: code.code_and_metadata_size / MiB,
    bytecodeAndMetadata: code.bytecode_and_metadata_size / MiB,
    externalScriptSource: code.external_script_source_size / MiB,
  };
}

function processFigures() {
  const m = process.memoryUsage();
  return { rss: m.rss / MiB, processHeapUsed: m.heapUsed / MiB };
}

/** The tree (checkout or staged image) a module belongs to: the nearest folder above it with a package.json. */
function treeOf(file) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir))
    if (existsSync(join(dir, 'package.json'))) return dir;
  throw new Error(`module-memory: no package.json above ${file}`);
}

/** workerData as engine/pool/pool.ts gives it (its defaults), with the solver of the module's own tree. */
function engineWorkerData(file) {
  const wasm = join(treeOf(file), 'solver-as', 'build', 'release.wasm');
  if (!existsSync(wasm)) throw new Error(`module-memory: ${wasm} is missing (npm run build:wasm)`);
  return {
    module: new WebAssembly.Module(readFileSync(wasm)),
    solver: {},
    whatIfLpSeconds: 30,
    idleTrim: { idleMs: 5_000, retainBytes: 64 * 1024 * 1024 },
  };
}

/** In a worker: import the module, collect, report the worker's isolate. */
const WORKER = `
import { parentPort, workerData } from 'node:worker_threads';
import { getHeapCodeStatistics, getHeapStatistics } from 'node:v8';
await import(workerData.url);
globalThis.gc();
parentPort.postMessage({ heap: getHeapStatistics(), code: getHeapCodeStatistics() });
`;

async function measureInWorker(url, file) {
  const { Worker } = await import('node:worker_threads');
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER)}`), {
    workerData: { url, ...engineWorkerData(file) },
  });
  const { heap, code } = await new Promise((res, rej) => {
    worker.once('message', res);
    worker.once('error', rej);
  });
  globalThis.gc();
  const figures = {
    heapUsed: heap.used_heap_size / MiB,
    codeAndMetadata: code.code_and_metadata_size / MiB,
    bytecodeAndMetadata: code.bytecode_and_metadata_size / MiB,
    externalScriptSource: code.external_script_source_size / MiB,
    ...processFigures(),
  };
  await worker.terminate();
  return figures;
}

/** One run, in this (child) process: prints its figures as one JSON line. */
async function child(file, inWorker) {
  const url = pathToFileURL(file).href;
  let figures;
  if (inWorker) figures = await measureInWorker(url, file);
  else {
    await import(url);
    globalThis.gc();
    figures = { ...isolateFigures(), ...processFigures() };
  }
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  process.exit(0);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function runOnce(file, inWorker) {
  const args = ['--expose-gc', fileURLToPath(import.meta.url), '--child', ...(inWorker ? ['--worker'] : []), file];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`module-memory: ${file} failed (exit ${r.status}):\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

function report(files, runs) {
  const head = ['module', ...FIELDS].join('\t');
  console.log(`medians of ${runs[0].length} runs, MiB\n${head}`);
  files.forEach((file, i) => {
    const cells = FIELDS.map((f) => median(runs[i].map((r) => r[f])).toFixed(1));
    console.log([file, ...cells].join('\t'));
  });
}

function usage(msg) {
  console.error(`module-memory: ${msg}\nusage: node scripts/module-memory.mjs [--worker] [--runs N] MODULE...`);
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    allowPositionals: true,
    options: { worker: { type: 'boolean' }, runs: { type: 'string' }, child: { type: 'boolean' } },
  });
} catch (e) {
  usage(e.message);
}
const files = args.positionals.map((p) => resolve(p));
if (!files.length) usage('name at least one module');
for (const f of files) if (!existsSync(f)) usage(`${f} does not exist`);
if (args.values.child) await child(files[0], args.values.worker);
else {
  const n = Number(args.values.runs ?? 5);
  if (!Number.isInteger(n) || n < 1) usage(`--runs must be a positive integer, got ${args.values.runs}`);
  const runs = files.map(() => []);
  for (let r = 0; r < n; r++) files.forEach((f, i) => runs[i].push(runOnce(f, args.values.worker)));
  report(files, runs);
}
