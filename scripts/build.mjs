#!/usr/bin/env node
// `npm run build:js` (part of `npm run build`, which `npm ci` runs through `prepare`): bundles the runtime
// (engine/, controller/, sim/, cli/ and the packages they import) into dist/ with esbuild, then copies the files
// the bundled code reads by path at run time, keeping their places relative to it (docs/building.md).
//
// Entry points (ENTRIES) land where tsc used to put the file they come from (cli/main.ts -> dist/cli/main.js),
// because they are loaded by path: bin/karpenter-ts.mjs imports dist/cli/main.js, cli/main.ts imports
// ./commands/<name>.js, the pool starts ./engine.worker.js beside engine/pool/pool.ts, the controller benchmark
// forks dist/sim/remote/controller-process.js. Code the entries share, and every dynamic import() (the AWS
// provider, HiGHS' embedded wasm), goes into dist/chunks/ (code splitting), so it is loaded once per thread and
// only when reached.
//
// A source file's import.meta.url stays the URL of its own dist/ twin (dist/cli/whatif/job.js for
// cli/whatif/job.ts) wherever esbuild puts its code: the URLs such files build from it (a worker beside them,
// an asset two folders up, package.json) resolve as they did file for file. See distUrl() below.
//
// Type checking is `tsc --noEmit` in `npm run lint`; esbuild only strips the types. dist/ is rebuilt from scratch
// each time. The WebAssembly solver must be built first (`npm run build:wasm`): the engine imports it as
// solver-as/build/embedded.ts.
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXTERNAL } from './external.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/** The modules loaded by path (see the header), as sources; each becomes dist/<same path>.js. */
const ENTRIES = [
  'cli/main.ts',
  ...readdirSync(join(root, 'cli', 'commands'))
    .filter((f) => /\.ts$/.test(f) && !/\.(test|fixture)\.ts$/.test(f))
    .map((f) => `cli/commands/${f}`),
  'engine/pool/engine.worker.ts',
  'sim/remote/controller-process.ts',
];

/**
 * Bundled CommonJS packages (the Kubernetes client, the AWS SDK, pino, ...) call require() for Node built-ins and
 * optional packages; an ES module has no require, so each output file gets one.
 */
const BANNER = "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

/**
 * Read at run time by path, relative to the source module that reads them:
 * - the guide's NodePool (cli/whatif/job.ts: what-if without --nodepools) and the other guide examples
 *   the scenarios apply;
 * - the simulator's scenarios (cli/commands/sim.ts: the default scenario and the files it applies);
 * - the malloc addon (controller/operator/malloc.ts), when `npm run build:native` could build it (`optional`).
 */
const ASSETS = [
  { from: 'examples/guide', match: /\.yaml$/ },
  { from: 'scenarios', match: /\.yaml$/ },
  { from: 'native/build', match: /\.node$/, optional: true },
];

/** Stands for the path from an output file's folder to dist/ until the outputs are written (distUrl). */
const DIST_ROOT = '__KARPENTER_TS_DIST_ROOT__';

/**
 * An esbuild plugin: in the project's own sources, `import.meta.url` becomes the URL of the file's dist/ twin,
 * written relative to the output file that holds the code (`new URL("../cli/whatif/job.js", import.meta.url)`
 * in a chunk under dist/chunks/). Which output holds a module is known only after bundling, so the path from
 * the output's folder to dist/ is written as DIST_ROOT here and filled in per output by fillDistRoot().
 */
const distUrl = {
  name: 'dist-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      const rel = relative(root, args.path);
      if (rel.startsWith('..') || rel.startsWith('node_modules')) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const twin = rel.replace(/\.ts$/, '.js').split('\\').join('/');
      const url = `new URL(${JSON.stringify(`${DIST_ROOT}/${twin}`)}, import.meta.url).href`;
      return { contents: text.replaceAll(/\bimport\.meta\.url\b/g, url), loader: 'ts' };
    });
  },
};

/** Writes esbuild's outputs, DIST_ROOT replaced in each by the path from its folder to dist/. */
function writeOutputs(outputFiles) {
  for (const f of outputFiles) {
    let text = f.text;
    if (f.path.endsWith('.js') && text.includes(DIST_ROOT)) {
      const up = relative(dirname(f.path), dist).split('\\').join('/');
      text = text.replaceAll(`"${DIST_ROOT}/`, `"${up ? `${up}/` : './'}`);
    }
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, text);
  }
}

async function bundle() {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ENTRIES,
    outdir: dist,
    outbase: '.',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    chunkNames: 'chunks/[name]-[hash]',
    banner: { js: BANNER },
    // V8 holds every loaded script's source text in the heap: the Kubernetes client's generated code alone is
    // megabytes of indentation and comments. Whitespace and syntax are minified; identifiers are not, so stack
    // traces keep their function names (the source maps give files and lines: node --enable-source-maps), and
    // keepNames keeps `.name` of the functions and classes bundling renames where two modules' names collide.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    sourcemap: true,
    plugins: [distUrl],
    write: false,
    logLevel: 'warning',
  });
  if (result.errors.length) {
    console.error('build: esbuild failed');
    process.exit(1);
  }
  writeOutputs(result.outputFiles);
  return result.outputFiles.filter((f) => f.path.endsWith('.js')).length;
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
  for (const { from, match, optional } of ASSETS) {
    if (optional && !existsSync(join(root, from))) continue;
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
const outputs = await bundle();
const assets = copyAssets();
// bin/karpenter-ts.mjs compares the sources' times with this file's to warn about a stale build.
writeFileSync(join(dist, 'BUILD'), `built ${new Date().toISOString()} by scripts/build.mjs\n`);
console.log(
  `build: dist/ bundled (${ENTRIES.length} entries, ${outputs} files), ${assets} assets copied, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
