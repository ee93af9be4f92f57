// The controller benchmark's own copy of dist/: the compiled controller it forks (and the engine workers that process
// starts) run from a copy taken once, when the run first needs it, so an `npm run build` during a run (which empties
// dist/ and writes it again) can neither crash a run nor give its scenarios two builds. The copy sits beside dist/,
// at the checkout's top (.bench-dist-<pid>/), so every path the bundles reach from their own place resolves as it
// does from dist/: bare imports (piscina, highs) from the checkout's node_modules, package.json one level up, the
// source maps' ../engine/... It is removed when the process ends: normally, on an uncaught error, or on SIGINT or
// SIGTERM (then the process dies of that signal after the removal); a copy left by a process killed outright goes
// with the next run's.
import { cpSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const PREFIX = '.bench-dist-';

/** Copies dir `from` to dir `to`, as cpSync does (a parameter: tests run a build in the middle of a copy). */
export type CopyTree = (from: string, to: string) => void;

const copyTree: CopyTree = (from, to) => cpSync(from, to, { recursive: true });

/** The build stamp scripts/build.mjs writes last (after emptying dist/ first), or undefined while there is none. */
function stamp(dist: string): string | undefined {
  try {
    return readFileSync(join(dist, 'BUILD'), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Copies `root`/dist to `root`/.bench-dist-`id`/ and returns the copy's path. A build that ran during the copy shows
 * as a stamp that changed (or went missing) between the start and the end: the copy is then taken again, up to
 * `attempts` times in all, and refused after.
 */
export function copyDist(root: string, id: string, copy: CopyTree = copyTree, attempts = 3): string {
  const dist = join(root, 'dist');
  const to = join(root, `${PREFIX}${id}`);
  for (let i = 0; i < attempts; i++) {
    rmSync(to, { recursive: true, force: true });
    const before = stamp(dist);
    if (before === undefined) throw new Error('controller bench: dist/ is not built: run `npm run build` first');
    copy(dist, to);
    if (stamp(dist) === before && stamp(to) === before) return to;
  }
  rmSync(to, { recursive: true, force: true });
  throw new Error(
    `controller bench: dist/ changed while it was copied (${attempts} times): wait for \`npm run build\` to finish`,
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the copies under `root` whose process is gone (killed before it could remove its own); returns them. */
export function sweepCopies(root: string): string[] {
  const gone = readdirSync(root).filter((name) => {
    const m = new RegExp(`^${PREFIX.replaceAll('.', '\\.')}(\\d+)$`).exec(name);
    return m !== null && !alive(Number(m[1]));
  });
  for (const name of gone) rmSync(join(root, name), { recursive: true, force: true });
  return gone;
}

const copies = new Map<string, string>();

/** Removes this process's copy of `root`'s dist/ when the process ends, however it ends but SIGKILL. */
function removeAtEnd(dir: string): void {
  const remove = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', remove);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const onSignal = () => {
      remove();
      // Die of the signal, as without this handler (the shell sees 130 or 143).
      process.kill(process.pid, signal);
    };
    process.once(signal, onSignal);
  }
}

/**
 * This process's copy of `root`/dist, taken on the first call (older copies of dead processes swept first) and the
 * same for every later one; removed when the process ends.
 */
export function privateDist(root: string): string {
  let dir = copies.get(root);
  if (dir) return dir;
  sweepCopies(root);
  dir = copyDist(root, String(process.pid));
  copies.set(root, dir);
  removeAtEnd(dir);
  return dir;
}
