// The runtime as built: dist/ (esbuild bundles, by `npm ci` through `prepare` or `npm run build`; scripts/build.mjs)
// and the tree the image holds (scripts/stage-image.mjs). Every relative reference in the bundles (imports of
// chunks, dynamic imports, URLs built from import.meta.url) names a file that exists; the bundles load only Node
// built-ins and production dependencies from outside; the command runs from dist/ with plain Node, workers
// included; the image's tree holds no simulator and no source maps.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script, no types
import { dependencyClosure, EXTERNAL, pruneModules } from '../../scripts/external.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = join(root, 'dist');
const built = existsSync(join(dist, 'BUILD'));
const snapshot = join(root, 'examples', 'snapshots', 'inflate.msgpack');

function jsFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) jsFiles(p, out);
    else if (/\.m?js$/.test(e.name)) out.push(p);
  }
  return out;
}

const STR = String.raw`(['"])(\.{1,2}\/[^'"]+)`;
/** Static and dynamic imports with a literal relative specifier (minified: `from"./x.js"`, `import"./x.js"`). */
const IMPORT = new RegExp(String.raw`(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)${STR}\1`, 'g');
/** `new URL('<relative>', import.meta.url)`: a file beside this one, or (see TWIN) a source file's dist/ twin. */
const URL_HERE = new RegExp(String.raw`new URL\(\s*${STR}\1\s*,\s*import\.meta\.url\s*\)`, 'g');
/**
 * `new URL('<relative>', new URL('<twin>', import.meta.url).href)`: what a source file's
 * `new URL('<relative>', import.meta.url)` becomes once bundled (scripts/build.mjs: import.meta.url is its twin's).
 */
const URL_FROM_TWIN = new RegExp(
  String.raw`new URL\(\s*${STR}\1\s*,\s*new URL\(\s*(['"])(\.{1,2}\/[^'"]+)\3\s*,\s*import\.meta\.url\s*\)\.href\s*\)`,
  'g',
);

/** A source file's dist/ twin (dist/cli/whatif/job.js for cli/whatif/job.ts): the URL the bundles give its code. */
function isTwin(tree: string, target: string): boolean {
  const rel = relative(tree, target);
  return !rel.startsWith('..') && /\.js$/.test(rel) && existsSync(join(root, rel.replace(/\.js$/, '.ts')));
}

/** Relative references in the bundles under `tree` whose target does not exist. */
function unresolved(tree: string): string[] {
  const missing: string[] = [];
  for (const file of jsFiles(tree)) {
    const text = readFileSync(file, 'utf8');
    const note = (spec: string) => missing.push(`${relative(tree, file)}: ${spec}`);
    for (const m of text.matchAll(IMPORT)) if (!existsSync(resolve(dirname(file), m[2]!))) note(m[2]!);
    for (const m of text.matchAll(URL_HERE)) {
      const target = resolve(dirname(file), m[2]!);
      if (!existsSync(target) && !isTwin(tree, target)) note(m[2]!);
    }
    for (const m of text.matchAll(URL_FROM_TWIN)) {
      const twin = resolve(dirname(file), m[4]!);
      if (!isTwin(tree, twin)) note(m[4]!);
      else if (!existsSync(resolve(dirname(twin), m[2]!))) note(`${m[2]} (from ${relative(tree, twin)})`);
    }
  }
  return missing;
}

/**
 * Bare specifiers the bundles load at run time, in the forms esbuild writes them: the import statements at the
 * top of a file (after build.mjs's banner, which ends in its `const require` line), dynamic imports, and
 * `__require("x")`, esbuild's call for a bundled CommonJS module's require(). Not a search of the whole text:
 * error messages in the bundled packages quote `require("...")` and `import "..."` for the reader.
 */
function bareSpecifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  const head = /\s*(?:import\s*[^"';]*?\s*(?:from\s*)?|const require\s*=[^;]*)(?:(["'])([^"']+)\1)?\s*;/y;
  for (let m = head.exec(text); m; m = head.exec(text)) if (m[2]) out.push(m[2]);
  for (const m of text.matchAll(/\b(?:import|__require)\(\s*(["'])([^"']+)\1\s*\)/g)) out.push(m[2]!);
  return out.filter((spec) => /^[@a-z]/.test(spec));
}

const packageName = (spec: string): string =>
  spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** Packages an installed package loads only if they are there: its optional dependencies and optional peers. */
function optionalPackages(): Set<string> {
  const out = new Set<string>();
  const modules = join(root, 'node_modules');
  const names = readdirSync(modules).flatMap((n) =>
    n.startsWith('@') ? readdirSync(join(modules, n)).map((m) => `${n}/${m}`) : n.startsWith('.') ? [] : [n],
  );
  for (const n of names) {
    const file = join(modules, n, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
    for (const d of Object.keys(pkg.optionalDependencies ?? {})) out.add(d);
    for (const [d, meta] of Object.entries(pkg.peerDependenciesMeta ?? {})) if (meta.optional) out.add(d);
  }
  return out;
}

function run(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'karpenter-ts.mjs'), ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('dist/', () => {
  it('is built (npm ci runs `npm run build` through prepare)', () => {
    expect(built, 'dist/ is missing: run `npm run build`').toBe(true);
  });

  it.runIf(built)('holds bundles whose relative references all resolve, and no .ts specifiers', () => {
    expect(unresolved(dist)).toEqual([]);
    const tsRefs = jsFiles(dist).filter((f) =>
      /(?:from\s*|import\s*\(\s*|new URL\(\s*)['"]\.{1,2}\/[^'"]+\.ts['"]/.test(readFileSync(f, 'utf8')),
    );
    expect(tsRefs.map((f) => relative(dist, f))).toEqual([]);
  });

  it.runIf(built)('holds the modules loaded by path where the code looks for them, and the lazy HiGHS chunk', () => {
    for (const entry of ['cli/main.js', 'cli/commands/controller.js', 'cli/commands/whatif.js']) {
      expect(existsSync(join(dist, entry)), entry).toBe(true);
    }
    expect(existsSync(join(dist, 'engine', 'pool', 'engine.worker.js'))).toBe(true);
    expect(existsSync(join(dist, 'sim', 'remote', 'controller-process.js'))).toBe(true);
    // The malloc addon (MALLOC_TRIM_INTERVAL) where the controller's module looks for it, when the machine built it.
    if (existsSync(join(root, 'native', 'build', 'malloc.node')))
      expect(existsSync(join(dist, 'native', 'build', 'malloc.node'))).toBe(true);
    // HiGHS' wasm (megabytes of base64) is a chunk of its own, imported dynamically: no entry loads it statically.
    const highs = jsFiles(dist).filter((f) => readFileSync(f, 'utf8').includes('highsWasmBase64='));
    expect(highs.map((f) => relative(dist, f))).toEqual([expect.stringMatching(/^chunks\/highs-embedded-\w+\.js$/)]);
    const name = relative(join(dist, 'chunks'), highs[0]!).replace('.', '\\.');
    const statically = new RegExp(String.raw`(?:\bfrom\s*|\bimport\s*)['"][^'"]*/${name}['"]`);
    const dynamically = new RegExp(String.raw`\bimport\(\s*['"][^'"]*/${name}['"]`);
    const files = jsFiles(dist).map((f) => ({ f: relative(dist, f), text: readFileSync(f, 'utf8') }));
    expect(files.filter((x) => statically.test(x.text)).map((x) => x.f)).toEqual([]);
    expect(files.filter((x) => dynamically.test(x.text)).length).toBeGreaterThan(0);
  });

  it.runIf(built)('loads only production dependencies, their optional packages and Node built-ins', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
    const builtins = new Set(builtinModules);
    const optional = optionalPackages();
    const outside: string[] = [];
    for (const file of jsFiles(dist)) {
      for (const spec of bareSpecifiers(file)) {
        if (spec.startsWith('node:') || builtins.has(spec)) continue;
        const name = packageName(spec);
        if (!(name in pkg.dependencies!) && !optional.has(name)) outside.push(`${relative(dist, file)}: ${spec}`);
      }
    }
    expect(outside).toEqual([]);
    for (const dev of ['assemblyscript', 'binaryen', 'esbuild', 'tsx', 'typescript', 'vitest', 'vite'])
      expect(pkg.dependencies).not.toHaveProperty(dev);
  });

  it.runIf(built)('runs the command with plain Node: usage, and a what-if batch whose jobs run in pool workers', () => {
    const help = run(['--help'], root);
    expect(help.code).toBe(0);
    expect(help.stderr + help.stdout).toMatch(/commands:[\s\S]*whatif[\s\S]*controller/);
    const batch = run(['whatif', '--grid', 'exact=true,false', '--jobs', '2', snapshot], tmpdir());
    expect(batch.stderr).not.toMatch(/Error|ERR_/);
    expect(batch.code).toBe(0);
    expect(batch.stdout).toMatch(/2 ok, 0 failed of 2 jobs/);
  });
});

describe('the image tree (scripts/stage-image.mjs)', () => {
  const out = mkdtempSync(join(tmpdir(), 'karpenter-ts-stage-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.runIf(built)('holds dist/ without the simulator or source maps, and every kept reference still resolves', () => {
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'stage-image.mjs'), out, '--no-install'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const staged = join(out, 'dist');
    expect(existsSync(join(out, 'bin', 'karpenter-ts.mjs'))).toBe(true);
    expect(existsSync(join(staged, 'cli', 'main.js'))).toBe(true);
    expect(existsSync(join(staged, 'examples', 'guide', 'guide-01.yaml'))).toBe(true);
    for (const gone of ['sim', 'scenarios', 'cli/commands/sim.js'])
      expect(existsSync(join(staged, gone)), gone).toBe(false);
    for (const entry of ['cli/commands/controller.js', 'cli/commands/whatif.js', 'engine/pool/engine.worker.js'])
      expect(existsSync(join(staged, entry)), entry).toBe(true);
    if (existsSync(join(dist, 'native', 'build', 'malloc.node')))
      expect(existsSync(join(staged, 'native', 'build', 'malloc.node'))).toBe(true);
    expect(readdirSync(staged, { recursive: true }).filter((f) => String(f).endsWith('.map'))).toEqual([]);
    expect(unresolved(staged)).toEqual([]);
    // The image's help offers only the commands it holds: `sim` is the simulator's.
    const help = spawnSync(process.execPath, [join(out, 'bin', 'karpenter-ts.mjs'), '--help'], { encoding: 'utf8' });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/commands:[\s\S]*whatif[\s\S]*controller/);
    expect(help.stdout).not.toMatch(/^\s+sim\s/m);
  });

  it.runIf(built)('runs a what-if batch with only the left-out packages and their dependencies in node_modules', () => {
    // What stage-image keeps after npm ci: the closure of scripts/external.mjs's list, copied from this checkout.
    const modules = join(root, 'node_modules');
    const kept = [...(dependencyClosure(modules, EXTERNAL) as Set<string>)];
    expect(kept.map((d) => relative(modules, d))).toEqual(expect.arrayContaining(['piscina', 'highs']));
    expect(kept.some((d) => /@kubernetes|@aws-sdk|pino|prom-client|yaml/.test(d))).toBe(false);
    for (const dir of kept) cpSync(dir, join(out, 'node_modules', relative(modules, dir)), { recursive: true });
    const batch = spawnSync(
      process.execPath,
      [join(out, 'bin', 'karpenter-ts.mjs'), 'whatif', '--grid', 'exact=true,false', '--jobs', '2', snapshot],
      { cwd: tmpdir(), encoding: 'utf8', timeout: 120_000 },
    );
    expect(batch.stderr).not.toMatch(/Error|ERR_/);
    expect(batch.status).toBe(0);
    expect(batch.stdout).toMatch(/2 ok, 0 failed of 2 jobs/);
  });

  it.runIf(built)('fails a what-if batch at once, naming the package, when node_modules has no highs', () => {
    // A tree whose node_modules lost highs (the lower bound's LP solver): the workers must still start, and each job
    // fail with an error that names the package; the batch once hung, its workers unable to load their module.
    const bare = mkdtempSync(join(tmpdir(), 'karpenter-ts-stage-nohighs-'));
    try {
      const r = spawnSync(process.execPath, [join(root, 'scripts', 'stage-image.mjs'), bare, '--no-install'], {
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      const modules = join(root, 'node_modules');
      const kept = [
        ...(dependencyClosure(
          modules,
          EXTERNAL.filter((n: string) => n !== 'highs'),
        ) as Set<string>),
      ];
      expect(kept.map((d) => relative(modules, d))).toContain('piscina');
      expect(kept.map((d) => relative(modules, d))).not.toContain('highs');
      for (const dir of kept) cpSync(dir, join(bare, 'node_modules', relative(modules, dir)), { recursive: true });
      const batch = spawnSync(
        process.execPath,
        [join(bare, 'bin', 'karpenter-ts.mjs'), 'whatif', '--grid', 'exact=true,false', '--jobs', '2', snapshot],
        { cwd: tmpdir(), encoding: 'utf8', timeout: 45_000 },
      );
      expect(batch.signal, 'the batch did not finish (killed at the timeout)').toBeNull();
      expect(batch.status).toBe(1);
      expect(batch.stdout).toMatch(/0 ok, 2 failed of 2 jobs/);
      expect(batch.stdout).toMatch(/the lower bound \(its LP\) needs the package `highs`, which cannot be loaded/);
      // The user's environment, not a bug: no "internal error", and what of the report needs the package.
      expect(batch.stdout).not.toMatch(/internal error/);
      expect(batch.stdout).toMatch(/lowerBoundPerHour\), so install the package `highs`/);
      // One job: a user error (exit 2, as for a file that does not parse) naming the input and the package.
      const one = spawnSync(process.execPath, [join(bare, 'bin', 'karpenter-ts.mjs'), 'whatif', snapshot], {
        cwd: tmpdir(),
        encoding: 'utf8',
        timeout: 45_000,
      });
      expect(one.signal, 'the job did not finish (killed at the timeout)').toBeNull();
      expect(one.status).toBe(2);
      expect(one.stderr).not.toMatch(/internal error/);
      expect(one.stderr).toMatch(
        /^karpenter-ts whatif: \S*inflate\.msgpack: the lower bound \(its LP\) needs the package `highs`, .*lowerBoundPerHour/,
      );
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it('prunes node_modules to the packages kept, nested ones with their parent, and drops npm bin links', () => {
    const tree = mkdtempSync(join(tmpdir(), 'karpenter-ts-prune-'));
    try {
      const modules = join(tree, 'node_modules');
      const pkg = (dir: string, deps: Record<string, string> = {}) => {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: dir, dependencies: deps }));
      };
      pkg(join(modules, 'a'), { b: '1', '@s/c': '1', missing: '1' });
      pkg(join(modules, 'a', 'node_modules', 'b'));
      pkg(join(modules, 'b'));
      pkg(join(modules, '@s', 'c'));
      pkg(join(modules, '@s', 'd'));
      pkg(join(modules, 'e'));
      mkdirSync(join(modules, '.bin'));
      const keep = dependencyClosure(modules, ['a']) as Set<string>;
      expect([...keep].map((d) => relative(modules, d)).sort()).toEqual(['@s/c', 'a', 'a/node_modules/b']);
      expect(pruneModules(modules, keep)).toBe(3);
      expect(readdirSync(modules).sort()).toEqual(['@s', 'a']);
      expect(readdirSync(join(modules, '@s'))).toEqual(['c']);
      expect(existsSync(join(modules, 'a', 'node_modules', 'b', 'package.json'))).toBe(true);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
