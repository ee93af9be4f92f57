// The compiled solver module, apart from the solver that runs it: the pool compiles it on the calling thread
// once and hands it to its workers, which adopt it here (engine/pool/engine.worker.ts), so that whatever in a
// worker asks for the module (its solver, the pattern bound) gets that one instead of compiling its own. Kept out
// of wasm.ts so that the calling thread's import graph holds no in-thread solver (scripts/lint-layers.mjs checks it).
import { debugWasmBase64, releaseWasmBase64 } from '../../solver-as/build/embedded.ts';

export type Build = 'release' | 'debug';

function decodeBase64(b64: string): Uint8Array<ArrayBuffer> {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const modules = new Map<Build, WebAssembly.Module>();

/** The compiled solver module (compiled once per process and build; shareable with workers). */
export function solverModule(build: Build = 'release'): WebAssembly.Module {
  let m = modules.get(build);
  if (!m) {
    m = new WebAssembly.Module(
      decodeBase64(build === 'release' ? releaseWasmBase64 : debugWasmBase64) as Uint8Array<ArrayBuffer>,
    );
    modules.set(build, m);
  }
  return m;
}

/**
 * Makes `module` this thread's compiled module of `build`: a worker adopts the one its pool compiled (a module
 * shared with a worker keeps its compiled code; compiling the bytes again would take time and memory).
 */
export function adoptSolverModule(build: Build, module: WebAssembly.Module): void {
  modules.set(build, module);
}
