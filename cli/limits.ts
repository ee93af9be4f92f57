// How much input a command reads, checked before it parses anything (docs/whatif.md "Input limits"): a file
// over the byte limit is refused before it is read, and a document set, snapshot or trace with more
// objects than the object limit is refused before any object is parsed. Parsing YAML takes tens of bytes
// of memory for every byte of text, so without a limit a large dump takes gigabytes and minutes before
// it fails. Each limit can be raised (or lowered) with an environment variable, in bytes or as a
// quantity (64Mi).
import { parseQuantity, QuantityError, unitValue } from '../engine/index.ts';
import { InputError } from './whatif/errors.ts';

export interface InputLimits {
  /** A YAML, JSON or CSV file. */
  readonly textBytes: number;
  /** A msgpack snapshot. */
  readonly snapshotBytes: number;
  /** Objects in one input (the documents and List items of a file set, a snapshot, the pods of a trace). */
  readonly objects: number;
}

export const LIMIT_VARS = {
  textBytes: 'KARPENTER_TS_MAX_TEXT_BYTES',
  snapshotBytes: 'KARPENTER_TS_MAX_SNAPSHOT_BYTES',
  objects: 'KARPENTER_TS_MAX_OBJECTS',
} as const;

export const DEFAULT_LIMITS: InputLimits = {
  textBytes: 32 * 1024 * 1024,
  snapshotBytes: 512 * 1024 * 1024,
  objects: 200_000,
};

/** The limits in force: the defaults, or what the environment sets. Throws an InputError naming a bad variable. */
export function inputLimits(env: Readonly<Record<string, string | undefined>>): InputLimits {
  const read = (key: keyof InputLimits): number => {
    const text = env[LIMIT_VARS[key]];
    if (text === undefined || text.trim() === '') return DEFAULT_LIMITS[key];
    try {
      const n = unitValue(parseQuantity(text));
      if (n >= 1 && Number.isSafeInteger(n)) return n;
    } catch (e) {
      if (!(e instanceof QuantityError)) throw e;
    }
    throw new InputError(
      `${LIMIT_VARS[key]}=${JSON.stringify(text)} is not a positive whole number (such as 64Mi or 500000)`,
    );
  };
  return { textBytes: read('textBytes'), snapshotBytes: read('snapshotBytes'), objects: read('objects') };
}

const mib = (n: number): string => (n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`);

/** The problem with a file of `size` bytes, or undefined when it is within the limit. */
export function sizeProblem(size: number, kind: 'text' | 'snapshot', limits: InputLimits): string | undefined {
  const limit = kind === 'text' ? limits.textBytes : limits.snapshotBytes;
  if (size <= limit) return undefined;
  const key = kind === 'text' ? 'textBytes' : 'snapshotBytes';
  const hint =
    kind === 'text' ? '; a large cluster reads faster and smaller as a msgpack snapshot (karpenter-ts snapshot)' : '';
  return `the file is ${mib(size)}, over the ${mib(limit)} limit for ${kind === 'text' ? 'YAML, JSON and CSV' : 'msgpack snapshot'} input (raise it with ${LIMIT_VARS[key]}=<bytes>${hint})`;
}

/** The problem with `count` objects, or undefined when within the limit. */
export function countProblem(count: number, what: string, limits: InputLimits): string | undefined {
  if (count <= limits.objects) return undefined;
  return `${count} ${what}, over the limit of ${limits.objects} (raise it with ${LIMIT_VARS.objects}=<count>)`;
}
