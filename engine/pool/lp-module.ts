// HiGHS' WebAssembly (3.5 MB), compiled once per process on the calling thread and handed to the workers with the
// tasks that solve an LP (what-if jobs), which instantiate it (pool/lp.ts) instead of compiling their own. A module
// shared between threads shares its compiled code: each worker otherwise compiled HiGHS for itself (about 100 ms
// of CPU and 8 MiB of code a worker) and tiered its hot functions up again in its own isolate, on the cores the
// other workers run on. The bytes are the installed package's, embedded at build as the solver's are
// (scripts/embed-wasm.mjs: the engine reads no files), and imported only on first use: a process that never bounds
// (the controller) never loads them. The compile is asynchronous (off the calling thread's event loop).

let compiling: Promise<WebAssembly.Module | undefined> | undefined;
/** Set once the compile has settled (`module` undefined when it failed). */
let settled: { readonly module: WebAssembly.Module | undefined } | undefined;

async function compile(): Promise<WebAssembly.Module | undefined> {
  try {
    const { highsWasmBase64 } = await import('../../solver-as/build/highs-embedded.ts');
    return await WebAssembly.compile(Buffer.from(highsWasmBase64, 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * HiGHS' compiled module: at once when it is compiled, else a promise of it; undefined when it cannot be compiled
 * here (each worker then loads HiGHS as it would on its own). Once compiled it is returned as is, not as a promise:
 * a caller that awaits nothing lets a batch's first task reach a worker before the calling thread has queued the
 * rest.
 */
export function lpModule(): WebAssembly.Module | undefined | Promise<WebAssembly.Module | undefined> {
  if (settled) return settled.module;
  compiling ??= compile().then((module) => {
    settled = { module };
    return module;
  });
  return compiling;
}
