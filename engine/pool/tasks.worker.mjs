// A task worker: runs a function exported by a module, in this worker thread. A task is
// { module: file URL, name: export, input }; the module is imported once per worker and its export
// called with the input; the result is structured-cloned back.
//
// TypeScript modules: this worker registers tsx's loader in its own thread before importing the first .ts
// module. Measured on Node 20.20: a worker started with execArgv ['--import', 'tsx'] does NOT apply tsx
// to modules a plain .mjs worker imports dynamically ("Unknown file extension .ts"); tsx's in-process
// register() called inside the worker does. Plain JavaScript itself, like the other workers.
const modules = new Map();
let tsx;

async function load(module) {
  if (/\.[cm]?ts$/.test(new URL(module).pathname)) {
    tsx ??= import('tsx/esm/api').then((api) => api.register());
    await tsx;
  }
  return import(module);
}

export default async function runTask({ module, name, input }) {
  let loading = modules.get(module);
  if (!loading) {
    loading = load(module);
    modules.set(module, loading);
  }
  const fn = (await loading)[name];
  if (typeof fn !== 'function') throw new TypeError(`task module ${module} has no exported function ${name}`);
  return fn(input);
}
