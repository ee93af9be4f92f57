// The controller benchmark's own copy of dist/ (dist-copy.ts): a build after the copy leaves it alone, a build during
// the copy is caught by its stamp, the copy is gone when the process ends (normally, on an error, on SIGINT or
// SIGTERM), copies of dead processes are swept, and the compiled code runs from the copy as from dist/.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { copyDist, sweepCopies, type CopyTree } from './dist-copy.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const trees: string[] = [];
afterAll(() => {
  for (const t of trees) rmSync(t, { recursive: true, force: true });
});

/** A checkout holding only a dist/ as scripts/build.mjs leaves it: emptied, the files written, BUILD last. */
function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'kts-dist-copy-'));
  trees.push(root);
  build(root, 'one');
  return root;
}

function build(root: string, which: string): void {
  const dist = join(root, 'dist');
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(join(dist, 'chunks'), { recursive: true });
  writeFileSync(join(dist, 'chunks', 'chunk.js'), `export const build = '${which}';\n`);
  writeFileSync(join(dist, 'BUILD'), `built ${which}\n`);
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8');

describe('the controller bench copy of dist/', () => {
  it('is taken beside dist/ and left alone by a build after it', () => {
    const root = checkout();
    const copy = copyDist(root, '1');
    expect(copy).toBe(join(root, '.bench-dist-1'));
    build(root, 'two');
    expect(read(copy, 'chunks/chunk.js')).toMatch(/'one'/);
    expect(read(copy, 'BUILD')).toBe('built one\n');
    expect(read(join(root, 'dist'), 'BUILD')).toBe('built two\n');
  });

  it('is taken again when a build ran during the copy, and refused when builds keep running', () => {
    const root = checkout();
    let builds = 0;
    // A build that finishes in the middle of the first copy: half the files are the old build's.
    const racing: CopyTree = (from, to) => {
      mkdirSync(join(to, 'chunks'), { recursive: true });
      writeFileSync(join(to, 'chunks', 'chunk.js'), read(from, 'chunks/chunk.js'));
      if (builds++ === 0) build(root, 'two');
      writeFileSync(join(to, 'BUILD'), read(from, 'BUILD'));
    };
    const copy = copyDist(root, '2', racing);
    expect(builds).toBe(2);
    expect(read(copy, 'chunks/chunk.js')).toMatch(/'two'/);
    expect(read(copy, 'BUILD')).toBe('built two\n');

    const always: CopyTree = (from, to) => {
      racing(from, to);
      build(root, `build-${builds++}`);
    };
    expect(() => copyDist(root, '3', always, 3)).toThrow(/dist\/ changed while it was copied \(3 times\)/);
    expect(existsSync(join(root, '.bench-dist-3'))).toBe(false);
  });

  it('is refused while dist/ has no build stamp (not built, or a build under way)', () => {
    const root = checkout();
    rmSync(join(root, 'dist', 'BUILD'));
    expect(() => copyDist(root, '4')).toThrow(/dist\/ is not built: run `npm run build` first/);
  });

  it('sweeps the copies of processes that are gone, and only those', () => {
    const root = checkout();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    for (const name of [`.bench-dist-${dead.stdout}`, `.bench-dist-${process.pid}`, '.bench-dist-x', 'dist'])
      mkdirSync(join(root, name), { recursive: true });
    expect(sweepCopies(root)).toEqual([`.bench-dist-${dead.stdout}`]);
    expect(readdirSync(root).sort()).toEqual(['.bench-dist-x', `.bench-dist-${process.pid}`, 'dist'].sort());
  });

  /** A process that takes its copy of `root`'s dist/ (privateDist), says where and whether it is there, then `end`s. */
  function takeCopyThen(root: string, end: string) {
    const script = [
      `const { privateDist } = await import(${JSON.stringify(join(repo, 'bench/controller/dist-copy.ts'))});`,
      `const { existsSync } = await import('node:fs');`,
      `const dir = privateDist(${JSON.stringify(root)});`,
      `console.log(dir, existsSync(dir) && privateDist(${JSON.stringify(root)}) === dir);`,
      end,
    ].join('\n');
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 30_000,
    });
    const [dir, there] = r.stdout.trim().split(' ');
    return { dir: dir!, there: there === 'true', status: r.status, signal: r.signal, stderr: r.stderr };
  }

  it.each([
    ['at a normal exit', '', { status: 0, signal: null }],
    ['on an uncaught error', "throw new Error('scenario failed');", { status: 1, signal: null }],
    ['on SIGINT (ctrl-c)', "process.kill(process.pid, 'SIGINT'); setTimeout(() => {}, 20_000);", { signal: 'SIGINT' }],
    ['on SIGTERM', "process.kill(process.pid, 'SIGTERM'); setTimeout(() => {}, 20_000);", { signal: 'SIGTERM' }],
  ])('is one per process, and removed %s', (_, end, ended) => {
    const root = checkout();
    const r = takeCopyThen(root, end);
    expect(r.dir, r.stderr).toMatch(/\.bench-dist-\d+$/);
    expect(r.there).toBe(true);
    expect(r).toMatchObject(ended);
    expect(existsSync(r.dir)).toBe(false);
    expect(existsSync(join(root, 'dist', 'BUILD'))).toBe(true);
  });

  it.runIf(existsSync(join(repo, 'dist', 'BUILD')))(
    "runs the compiled code from the copy: its workers, the checkout's node_modules, package.json one level up",
    () => {
      const copy = copyDist(repo, `test-${process.pid}`);
      trees.push(copy);
      const snapshot = join(repo, 'examples', 'snapshots', 'inflate.msgpack');
      const run = (args: string[]) =>
        spawnSync(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `const { main } = await import(${JSON.stringify(join(copy, 'cli', 'main.js'))});
             process.exitCode = await main(${JSON.stringify(args)});`,
          ],
          { cwd: tmpdir(), encoding: 'utf8', timeout: 60_000 },
        );
      const version = run(['--version']);
      const pkg = JSON.parse(read(repo, 'package.json')) as { version: string };
      expect(version.stdout.trim(), version.stderr).toBe(`karpenter-ts ${pkg.version}`);
      const whatif = run(['whatif', '--grid', 'exact=true,false', '--jobs', '2', snapshot]);
      expect(whatif.stderr).not.toMatch(/Error|ERR_/);
      expect(whatif.status).toBe(0);
      expect(whatif.stdout).toMatch(/2 ok, 0 failed of 2 jobs/);
    },
  );
});
