// How snapshot deltas and operations cross to a worker: msgpackr with its record extension (pods share a few
// shapes) and `moreTypes` (instance-type requirements are Maps of Sets), packed into a buffer of exactly the
// message's length that is transferred, not copied. msgpackr packs into a reused, growing buffer: the message
// is sliced out of it (a view would drag the whole backing buffer along, or lose it to the next pack).
//
// Strings are decoded in JavaScript, each a string of its own. msgpackr's entry point for Node loads a native
// extractor that decodes each run of strings of a message as one string and hands out slices of it: a warm
// model keeps a pod's uid and name for as long as the pod lives, and each such slice kept the whole run (the
// message's bytes around it, names, label values and all) alive with it, about 440 bytes a pod in the model's
// worker (docs/controller-benchmark.md). The `pack` and `unpack` entry points never load the extractor.
//
// msgpackr keeps the buffer it packs into for the next pack, grown to the largest message so far (it lets go
// only past 1 GiB): on the controller's main thread the first delta of a cluster's model (every node and pod)
// left a 15 MiB buffer at 1,000 nodes / 20,000 pods for the process's life, outside the V8 heap but resident.
// After a message larger than KEPT_BYTES the packer is handed a fresh buffer of KEPT_BYTES instead; a message
// that large is rare (a model's first delta, a decision over thousands of pods) and grows a buffer again.
import { Packr } from 'msgpackr/pack';
import * as unpackModule from 'msgpackr/unpack';

const packr = new Packr({ moreTypes: true });
const unpackr = new unpackModule.Unpackr({ moreTypes: true });

/** The largest buffer the packer keeps between messages. */
const KEPT_BYTES = 1 << 20;

/** The value as a buffer of its own (transferable). */
export function pack(value: unknown): ArrayBuffer {
  const view = packr.pack(value);
  const out = Uint8Array.prototype.slice.call(view).buffer as ArrayBuffer;
  if (view.buffer.byteLength > KEPT_BYTES) packr.useBuffer(Buffer.allocUnsafeSlow(KEPT_BYTES));
  return out;
}

/** The size of the buffer the packer holds now (the one its next message is packed into), bytes. */
export function packBufferBytes(): number {
  return packr.pack(null).buffer.byteLength;
}

export function unpack<T>(buf: ArrayBuffer): T {
  return unpackr.unpack(new Uint8Array(buf)) as T;
}

/**
 * Whether this thread's msgpackr decodes strings with the native extractor (slices of one string per run):
 * false unless something in the thread loaded msgpackr's main entry point (engine workers never do).
 */
export function nativeStringDecoding(): boolean {
  return (unpackModule as unknown as { readonly isNativeAccelerationEnabled: boolean }).isNativeAccelerationEnabled;
}
