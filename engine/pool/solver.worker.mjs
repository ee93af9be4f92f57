// A solver worker: one WebAssembly instance per thread, created at load from the module the main thread
// compiled once and passed in workerData. Tasks carry an encoded input block (transferred) and get the
// result block back (transferred). Plain JavaScript on purpose: workers do not go through tsx's loader.
import { workerData } from 'node:worker_threads';
import Piscina from 'piscina';

const { module, abiVersion, abi } = workerData;
const instance = new WebAssembly.Instance(module, {
  env: {
    abort(msg, file, line, col) {
      throw new Error(`solver aborted at ${line}:${col}`);
    },
    now: () => performance.now(),
  },
});
const x = instance.exports;
if (x.abiVersion() !== abiVersion) throw new Error(`solver module ABI ${x.abiVersion()} does not match the engine's ${abiVersion}`);

/** Copies the block in, solves, and returns a copy of the result block (views made after the solve). */
export default function solve({ block, setBytes }) {
  x.reset();
  const at = x.alloc(block.byteLength);
  new Uint8Array(x.memory.buffer, at, block.byteLength).set(new Uint8Array(block));
  const r = x.solve(at);
  const head = new Int32Array(x.memory.buffer, r, abi.R_WORDS);
  const size = head[abi.R_STATUS] !== abi.S_OK ? abi.R_WORDS * 4 : head[abi.R_SETS] + head[abi.R_NSETS] * setBytes;
  const out = x.memory.buffer.slice(r, r + size);
  return Piscina.move(out);
}
