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
import { Packr } from 'msgpackr/pack';
import * as unpackModule from 'msgpackr/unpack';

const packr = new Packr({ moreTypes: true });
const unpackr = new unpackModule.Unpackr({ moreTypes: true });

/** The value as a buffer of its own (transferable). */
export function pack(value: unknown): ArrayBuffer {
  const view = packr.pack(value);
  return Uint8Array.prototype.slice.call(view).buffer as ArrayBuffer;
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
