// The compiled runtime: dist/ (built by `npm ci` through `prepare`, or `npm run build`) and the tree the
// image holds (scripts/stage-image.mjs). Every relative module reference in the compiled JavaScript
// (imports, dynamic imports, worker and task URLs) names a file that exists beside it; the command runs
// from dist/ with plain Node, workers included; the image's tree holds no simulator and no source maps.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = join(root, 'dist');
const built = existsSync(join(dist, 'BUILD'));

function jsFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) jsFiles(p, out);
    else if (/\.m?js$/.test(e.name)) out.push(p);
  }
  return out;
}

// Static and dynamic imports with a literal specifier, and `new URL('<relative>', import.meta.url)`.
const REFERENCE = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|new URL\(\s*)(['"])(\.{1,2}\/[^'"]+)\1/g;

/** Relative references in the compiled files under `dir` whose target does not exist. */
function unresolved(dir: string): string[] {
  const missing: string[] = [];
  for (const file of jsFiles(dir)) {
    for (const m of readFileSync(file, 'utf8').matchAll(REFERENCE)) {
      const target = resolve(dirname(file), m[2]!);
      if (!existsSync(target)) missing.push(`${relative(dir, file)}: ${m[2]}`);
    }
  }
  return missing;
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

  it.runIf(built)('holds compiled JavaScript whose relative references all resolve, and no .ts specifiers', () => {
    expect(unresolved(dist)).toEqual([]);
    const tsRefs = jsFiles(dist).filter((f) =>
      /(?:from\s*|import\s*\(\s*|new URL\(\s*)['"]\.{1,2}\/[^'"]+\.ts['"]/.test(readFileSync(f, 'utf8')),
    );
    expect(tsRefs.map((f) => relative(dist, f))).toEqual([]);
  });

  it.runIf(built)('imports only production dependencies and Node built-ins', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // tsx is imported only to load TypeScript source (tests, benchmarks), which dist/ never does.
    const sourceOnly = new Set(['tsx']);
    const bare = /(?:^\s*(?:import|export)\b[^'";]*?\bfrom\s*|^\s*import\s*|\bimport\(\s*)(['"])([@a-z][\w@./-]*)\1/gm;
    const outside: string[] = [];
    for (const file of jsFiles(dist)) {
      for (const m of readFileSync(file, 'utf8').matchAll(bare)) {
        const spec = m[2]!;
        if (spec.startsWith('node:')) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!(name in pkg.dependencies) && !sourceOnly.has(name)) outside.push(`${relative(dist, file)}: ${spec}`);
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
    const batch = run(
      ['whatif', '--grid', 'exact=true,false', '--jobs', '2', join(root, 'examples', 'snapshots', 'inflate.msgpack')],
      tmpdir(),
    );
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
    expect(jsFiles(staged).length).toBeGreaterThan(100);
    expect(readdirSync(staged, { recursive: true }).filter((f) => String(f).endsWith('.map'))).toEqual([]);
    expect(unresolved(staged)).toEqual([]);
    // The image's help offers only the commands it holds: `sim` is the simulator's.
    const help = spawnSync(process.execPath, [join(out, 'bin', 'karpenter-ts.mjs'), '--help'], { encoding: 'utf8' });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/commands:[\s\S]*whatif[\s\S]*controller/);
    expect(help.stdout).not.toMatch(/^\s+sim\s/m);
  });
});
