// How snapshot deltas and operations cross to a worker: msgpackr with its record extension (pods share a few
// shapes) and `moreTypes` (instance-type requirements are Maps of Sets), packed into a buffer of exactly the
// message's length that is transferred, not copied. msgpackr packs into a reused, growing buffer: the message
// is sliced out of it (a view would drag the whole backing buffer along, or lose it to the next pack).
import { Packr, Unpackr } from 'msgpackr';

const packr = new Packr({ moreTypes: true });
const unpackr = new Unpackr({ moreTypes: true });

/** The value as a buffer of its own (transferable). */
export function pack(value: unknown): ArrayBuffer {
  const view = packr.pack(value);
  return Uint8Array.prototype.slice.call(view).buffer as ArrayBuffer;
}

export function unpack<T>(buf: ArrayBuffer): T {
  return unpackr.unpack(new Uint8Array(buf)) as T;
}
