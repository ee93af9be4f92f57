// Where a module that is loaded by URL (a worker file, a task module) lives, in the form the calling code
// runs as: from source (vitest, tsx) the caller is a `.ts` file and so is its sibling; from the built runtime
// (dist/, what `karpenter-ts` and the image run) the caller's import.meta.url is its `.js` twin in dist/ (the
// build gives bundled code that URL) and the sibling is a bundle entry at its `.js` twin's place
// (scripts/build.mjs). Callers write the source name (`./x.worker.ts`), the same way they write imports.
//
// Worker threads do not inherit the main thread's loader: a `.ts` worker (source only) is started with
// tsx's loader in its own execArgv; a compiled worker needs nothing, and tsx is not installed in the image.

/** The URL (href) of `relative` resolved against `base` (the caller's import.meta.url), as this build names it. */
export function moduleUrl(relative: string, base: string): string {
  const url = new URL(relative, base);
  if (isCompiled(base)) url.pathname = url.pathname.replace(/\.([cm]?)ts$/, '.$1js');
  return url.href;
}

/** What a piscina pool (or a Worker) needs to start the worker module `relative` next to `base`. */
interface WorkerModule {
  /** The worker's file URL (href). */
  readonly filename: string;
  /** The worker's execArgv: the parent's plus tsx's loader when the worker is TypeScript source. */
  readonly execArgv?: string[];
}

export function workerModule(relative: string, base: string): WorkerModule {
  const filename = moduleUrl(relative, base);
  if (!/\.[cm]?ts$/.test(new URL(filename).pathname)) return { filename };
  return { filename, execArgv: withTsx(process.execArgv) };
}

/** The caller runs compiled JavaScript (dist/) rather than TypeScript source. */
function isCompiled(base: string): boolean {
  return /\.[cm]?js$/.test(new URL(base).pathname);
}

let tsxPreload: string | undefined;

/**
 * execArgv plus a preload that registers tsx's loader in the worker's own thread. `--import tsx` alone is
 * not enough in a worker on Node 20 (its ESM hooks are not installed there, so a .ts module that piscina
 * loads through import() fails with "Unknown file extension"); tsx's register() called in the thread is.
 * The preload is a data: URL importing tsx by absolute URL, so it resolves whatever the working directory.
 */
function withTsx(execArgv: readonly string[]): string[] {
  tsxPreload ??= `data:text/javascript,import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register();`;
  return execArgv.includes(tsxPreload) ? [...execArgv] : [...execArgv, '--import', tsxPreload];
}
