#!/usr/bin/env node
// Keeps the layer arrows (CONTRIBUTING.md) true:
//
//   solver-as  <-  engine  <-  controller  <-  sim  <-  cli
//                    ^
//            bench --+  (bench/controller -> sim)   test (may import anything)
//
// - solver-as/ imports only AssemblyScript's std and its own files; solver-as/abi.ts imports nothing.
// - engine/ (non-test files) imports only engine/, solver-as/abi.ts and the embedded wasm build; it never
//   imports Kubernetes, AWS, files, sockets, HTTP, metrics or logging, and never reads the wall clock
//   (time comes in as an argument). engine/pool/ alone may use threads (piscina, worker_threads); it and the
//   wasm host (engine/solver/wasm.ts) may read a monotonic clock to bound compute time.
// - controller/ reaches the engine only through engine/index.ts and never imports solver-as/, sim/, bench/ or cli/
//   (it holds only what runs in production).
// - sim/ (the simulator) reaches the engine only through engine/index.ts and never imports cli/, bench/ or test/.
// - cli/ reaches the engine only through engine/index.ts too.
// - engine/index.ts exports no decision that runs in the calling thread (the solvers, provision, disrupt,
//   validate, the bound, what-if, ...): controller/, sim/ and cli/ decide through createEngine's worker pool.
//   Those live in engine/local.ts, for the workers, benchmarks and tests. Nor does any module engine/index.ts
//   loads, directly or in turn, define one (a renamed re-export cannot bring one back).
// - bench/ imports engine/index.ts, engine/local.ts and test/fixtures only (plus its own files); bench/controller/
//   (the controller benchmark, which runs the real controller against the simulator) may also import sim/.
// - nothing outside test code imports test/ (except bench -> test/fixtures).
// Exits 1 with one line per violation. `node scripts/lint-layers.mjs [DIR]` checks DIR instead of the repository.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';

// The tree to check: the repository, or the folder given as the first argument (the lint's own test).
const root = process.argv[2] ? resolve(process.argv[2]) : resolve(dirname(new URL(import.meta.url).pathname), '..');
const problems = [];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'build' || name.startsWith('.')) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, out);
    else if (/\.(ts|mts|mjs|js)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

// An import or re-export (group 1: `type ` for a type-only one, 2: its specifier), a dynamic import (3) or a bare
// import (4).
const importRe =
  /(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[^.\w])import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;

/** Specifiers `text` imports; with `valuesOnly`, not the type-only ones (they load nothing at run time). */
function importsOf(text, valuesOnly = false) {
  const out = [];
  for (const m of text.matchAll(importRe)) if (!(valuesOnly && m[1])) out.push(m[2] ?? m[3] ?? m[4]);
  return out;
}

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

const top = (rel) => rel.split(sep)[0];
const isTest = (rel) => /\.test\.ts$/.test(rel) || top(rel) === 'test';

/** Where an import of `file` points: `target` (a repository path) and `tLayer` for a relative one, else null. */
function importTarget(file, spec) {
  const isRel = spec.startsWith('.');
  const target = isRel ? relative(root, resolve(dirname(file), spec)) : null;
  return { spec, isRel, target, tLayer: target ? top(target) : null };
}

// The import rules of each layer: (rel, import, report) for every import of a file of that layer. The rules for
// solver-as/ bind its test files too; the others bind non-test files only.

function solverAsImport(rel, { spec, isRel, tLayer }, report) {
  if (!isRel || tLayer !== 'solver-as') report(`imports ${spec}: solver-as/ may import only its own files`);
  if (rel === join('solver-as', 'abi.ts')) report(`imports ${spec}: solver-as/abi.ts must import nothing`);
}

function engineImport(rel, { spec, isRel, target, tLayer }, report) {
  const inPool = rel.startsWith(join('engine', 'pool') + sep);
  if (isRel) {
    const okSolver = target === join('solver-as', 'abi.ts') || target.startsWith(join('solver-as', 'build') + sep);
    if (tLayer !== 'engine' && !okSolver)
      report(`imports ${spec}: engine/ may import only engine/, solver-as/abi.ts and the built wasm`);
  } else if (
    /^node:(fs|http|https|net|dgram|child_process|dns|tls)/.test(spec) ||
    /^(fs|http|https|net)(\/|$)/.test(spec)
  ) {
    report(`imports ${spec}: the engine never touches files or the network`);
  } else if (/^(@kubernetes\/|@aws-sdk\/|prom-client|pino)/.test(spec)) {
    report(`imports ${spec}: the engine never imports Kubernetes, AWS, metrics or logging`);
  } else if (/^(piscina|msgpackr|node:worker_threads|worker_threads|highs)$/.test(spec) && !inPool) {
    report(`imports ${spec}: only engine/pool/ may use threads and the LP solver module`);
  }
}

function controllerImport(_rel, { spec, isRel, target, tLayer }, report) {
  if (isRel && tLayer === 'engine' && target !== join('engine', 'index.ts'))
    report(`imports ${spec}: controller/ reaches the engine only through engine/index.ts`);
  if (isRel && ['solver-as', 'sim', 'cli', 'bench', 'test'].includes(tLayer))
    report(`imports ${spec}: controller/ must not import ${tLayer}/`);
}

function simImport(_rel, { spec, isRel, target, tLayer }, report) {
  if (isRel && tLayer === 'engine' && target !== join('engine', 'index.ts'))
    report(`imports ${spec}: sim/ reaches the engine only through engine/index.ts`);
  if (isRel && ['solver-as', 'cli', 'bench', 'test'].includes(tLayer))
    report(`imports ${spec}: sim/ must not import ${tLayer}/`);
}

function benchImport(rel, { spec, isRel, target, tLayer }, report) {
  const okEngine = target === join('engine', 'index.ts') || target === join('engine', 'local.ts');
  const okFixtures = target && target.startsWith(join('test', 'fixtures'));
  // The controller benchmark runs the real controller against the simulator: it alone may use sim/
  // (which brings the controller with it); it never imports controller/ directly.
  const okSim = tLayer === 'sim' && rel.startsWith(join('bench', 'controller') + sep);
  if (isRel && tLayer !== 'bench' && !okEngine && !okFixtures && !okSim)
    report(`imports ${spec}: bench/ may import engine/index.ts and test/fixtures only (bench/controller/ also sim/)`);
}

function cliImport(_rel, { spec, isRel, target, tLayer }, report) {
  if (isRel && tLayer === 'test') report(`imports ${spec}: cli/ must not import test/`);
  if (isRel && tLayer === 'engine' && target !== join('engine', 'index.ts'))
    report(`imports ${spec}: cli/ reaches the engine only through engine/index.ts`);
}

function scriptsImport(_rel, { spec, isRel, tLayer }, report) {
  if (isRel && tLayer === 'test') report(`imports ${spec}: scripts/ must not import test/`);
}

const IMPORT_RULES = {
  'solver-as': solverAsImport,
  engine: engineImport,
  controller: controllerImport,
  sim: simImport,
  bench: benchImport,
  cli: cliImport,
  scripts: scriptsImport,
};

/** The engine's code itself (not its imports): no wall clock, timers, monotonic clock or process outside their places. */
function engineCode(rel, code, report) {
  const inPool = rel.startsWith(join('engine', 'pool') + sep);
  if (/\bDate\.now\s*\(|new Date\(\s*\)/.test(code))
    report('reads the wall clock: the engine takes time as an argument');
  // A monotonic clock bounds compute time (the solver's deadline); only the pool and the wasm host use it.
  const host = rel === join('engine', 'solver', 'wasm.ts');
  if (!inPool && /\b(setTimeout|setInterval)\s*\(/.test(code))
    report('uses timers: only engine/pool/ may (for deadlines)');
  if (!inPool && !host && /\bperformance\.now\s*\(/.test(code))
    report('reads a clock: only engine/pool/ and the wasm host may (for compute deadlines)');
  if (/\bprocess\.(env|argv|stdout|stderr|exit)\b/.test(code))
    report('touches the process: the engine gets its options as arguments');
}

/** One file: its imports against its layer's rules, then (in the engine) its code. */
function check(file) {
  const rel = relative(root, file);
  const layer = top(rel);
  const code = stripComments(readFileSync(file, 'utf8'));
  const report = (msg) => problems.push(`${rel}: ${msg}`);
  const importRule = layer === 'solver-as' || !isTest(rel) ? IMPORT_RULES[layer] : undefined;
  if (importRule) for (const spec of importsOf(code)) importRule(rel, importTarget(file, spec), report);
  if (layer === 'engine' && !isTest(rel)) engineCode(rel, code, report);
}

/**
 * Value names a module exports, following `export * from` and `export { ... } from` (type-only exports are
 * left out: a type decides nothing).
 */
function exportedValues(file, seen = new Set()) {
  if (seen.has(file)) return new Set();
  seen.add(file);
  const code = stripComments(readFileSync(file, 'utf8'));
  const out = new Set();
  for (const m of code.matchAll(
    /(?:^|\n)\s*export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|enum)\s+([A-Za-z_$][\w$]*)/g,
  ))
    out.add(m[1]);
  for (const m of code.matchAll(/(?:^|\n)\s*export\s+\*\s+as\s+([A-Za-z_$][\w$]*)\s+from/g)) out.add(m[1]);
  for (const m of code.matchAll(/(?:^|\n)\s*export\s+\*\s+from\s*['"]([^'"]+)['"]/g)) {
    for (const n of exportedValues(resolve(dirname(file), m[1]), seen)) out.add(n);
  }
  for (const m of code.matchAll(/(?:^|\n)\s*export\s+(type\s+)?\{([^}]*)\}/g)) {
    if (m[1]) continue;
    for (const part of m[2].split(',')) {
      const item = part.trim();
      if (!item || item.startsWith('type ')) continue;
      out.add(
        item
          .split(/\s+as\s+/)
          .pop()
          .trim(),
      );
    }
  }
  return out;
}

/** The decisions themselves: no module the calling thread loads may define one (the workers' modules do). */
const DECISIONS = [
  'provision',
  'WasmSolver',
  'instantiateSolver',
  'solveReference',
  'disrupt',
  'validate',
  'explainNode',
  'templateClaim',
  'staticScaleDown',
  'planRepack',
  'computeConsolidation',
  'simulate',
  'lowerBound',
  'buildBoundModel',
  'inThreadLp',
  'whatIf',
  'inThreadEngine',
  'runWhatIfJob',
  'ClusterModel',
  'encodeProvision',
  'decodeProvision',
];

/** What engine/index.ts must not export: the decisions and the in-thread machinery they run on (engine/local.ts). */
const IN_THREAD = [...DECISIONS, 'ModelMirror', 'ModelCaches', 'EnginePool', 'SolverPool', 'PooledSolver'];

function checkPublicSurface() {
  const surface = exportedValues(join(root, 'engine', 'index.ts'));
  for (const name of IN_THREAD) {
    if (surface.has(name))
      problems.push(
        `engine/index.ts: exports ${name}, which decides in the calling thread; it belongs in engine/local.ts (controller/, sim/ and cli/ decide through createEngine)`,
      );
  }
}

/** Relative modules `file` loads at run time. */
function valueImports(file) {
  const code = stripComments(readFileSync(file, 'utf8'));
  return importsOf(code, true)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(file), spec));
}

/**
 * What controller/, sim/ and cli/ load of the engine is engine/index.ts and everything it loads in turn: a
 * renamed re-export (`export { provision as plan }`) or a helper kept beside a decision would bring the decision
 * into the calling thread's module graph, where any caller could reach it. Walks that graph and reports a module
 * in it that defines a decision, with the chain of imports that reaches it.
 */
function checkMainThreadGraph() {
  const entry = join(root, 'engine', 'index.ts');
  const via = new Map([[entry, undefined]]);
  const todo = [entry];
  while (todo.length) {
    const file = todo.pop();
    for (const t of valueImports(file)) {
      if (via.has(t) || !/\.ts$/.test(t)) continue;
      try {
        statSync(t);
      } catch {
        continue;
      }
      via.set(t, file);
      todo.push(t);
    }
  }
  const chain = (f) => {
    const out = [];
    for (let x = f; x; x = via.get(x)) out.unshift(relative(root, x));
    return out.join(' -> ');
  };
  for (const file of via.keys()) {
    const code = stripComments(readFileSync(file, 'utf8'));
    // A decision is defined at module level by a function or class declaration, or by a binding to a function or
    // class expression (`const provision = (...) => ...`, `let disrupt = function ...`, `const WasmSolver = class`).
    // Inner functions of the same name (a method of the pooled engine's client) are not decisions.
    for (const m of code.matchAll(
      /(?:^|\n)(?:export\s+)?(?:declare\s+)?(?:async\s+)?(?:function\*?|class)\s+([A-Za-z_$][\w$]*)|(?:^|\n)(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::(?:[^=;]|=>)+?)?=\s*(?:async\s+)?(?:function\b|class\b|\(|[A-Za-z_$][\w$]*\s*=>)/g,
    )) {
      const name = m[1] ?? m[2];
      if (DECISIONS.includes(name))
        problems.push(
          `${relative(root, file)}: defines ${name}, a decision, and the calling thread loads it (${chain(file)}); the decision belongs to the workers' modules (engine/local.ts), its helpers in a module of their own`,
        );
    }
  }
}

checkPublicSurface();
checkMainThreadGraph();

for (const dir of ['solver-as', 'engine', 'controller', 'sim', 'cli', 'bench', 'scripts']) {
  try {
    for (const f of walk(join(root, dir))) check(f);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
}

if (problems.length) {
  for (const p of problems) console.error(p);
  console.error(`lint-layers: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log('lint-layers: ok');
