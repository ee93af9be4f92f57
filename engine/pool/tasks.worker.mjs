// A task worker: runs a function exported by a module (TypeScript when the pool starts workers with tsx's
// loader) in this worker thread. A task is { module: file URL, name: export, input }; the module is
// imported once per worker and its export called with the input; the result is structured-cloned back.
// Plain JavaScript, like the other workers: it must load before any loader applies to what it imports.
const modules = new Map();

export default async function runTask({ module, name, input }) {
  let loading = modules.get(module);
  if (!loading) {
    loading = import(module);
    modules.set(module, loading);
  }
  const fn = (await loading)[name];
  if (typeof fn !== 'function') throw new TypeError(`task module ${module} has no exported function ${name}`);
  return fn(input);
}
