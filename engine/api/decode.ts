// Reading untyped Kubernetes objects (Pods, Nodes, DaemonSets, ...) field by field, collecting a
// FieldError for every field of the wrong type instead of throwing. One Decoder per object.
import { resourceValue } from '../domain/resources.ts';
import { fieldError, isRecord, show, typeName, type FieldError, type PathSeg } from './errors.ts';

export type Obj = Record<string, unknown>;

/**
 * Parts already decoded, by the source object they were decoded from and what decoded them: for a caller whose
 * source objects are never changed once handed over, and whose objects share equal parts (the controller's pods,
 * whose stripped copies share a workload's labels, tolerations, containers and so on: controller/state/strip.ts),
 * so that each such part is decoded once rather than once per pod. Only a part that decoded without an error is
 * kept (an error names the field's path, which differs from object to object). A kept result is handed to every
 * object with that part: results are read, never changed (as the pod interner's shared parts are).
 */
export class PartMemo {
  private readonly byDecoder = new Map<string, WeakMap<object, unknown>>();

  get(decoder: string, source: object): unknown {
    return this.byDecoder.get(decoder)?.get(source);
  }

  set(decoder: string, source: object, decoded: unknown): void {
    let m = this.byDecoder.get(decoder);
    if (!m) this.byDecoder.set(decoder, (m = new WeakMap()));
    m.set(source, decoded);
  }
}

export class Decoder {
  readonly errors: FieldError[] = [];

  /** `memo`: parts decoded before (see PartMemo); without it, every part is decoded. */
  constructor(
    readonly object: string,
    private readonly memo?: PartMemo,
  ) {}

  /**
   * `decode()`, the decoding of the part `source` by `decoder` (a name for what decodes it), or what it gave
   * before for the same source object when this decoder has a memo. A source that is no object is decoded each
   * time; so is a result of undefined.
   */
  part<T>(decoder: string, source: unknown, decode: () => T): T {
    const memo = this.memo;
    if (!memo || typeof source !== 'object' || source === null) return decode();
    const known = memo.get(decoder, source);
    if (known !== undefined) return known as T;
    const errors = this.errors.length;
    const decoded = decode();
    if (this.errors.length === errors && decoded !== undefined) memo.set(decoder, source, decoded);
    return decoded;
  }

  err(path: readonly PathSeg[], message: string): void {
    this.errors.push(fieldError(this.object, path, message));
  }

  private wrong(path: readonly PathSeg[], want: string, v: unknown): undefined {
    this.err(path, `must be ${want}, not ${typeName(v)} (${show(v)})`);
    return undefined;
  }

  obj(v: unknown, path: readonly PathSeg[]): Obj | undefined {
    if (v === undefined || v === null) return undefined;
    return isRecord(v) ? v : this.wrong(path, 'an object', v);
  }

  arr(v: unknown, path: readonly PathSeg[]): unknown[] {
    if (v === undefined || v === null) return [];
    return Array.isArray(v) ? v : (this.wrong(path, 'a list', v) ?? []);
  }

  str(v: unknown, path: readonly PathSeg[]): string | undefined {
    if (v === undefined || v === null) return undefined;
    return typeof v === 'string' ? v : this.wrong(path, 'a string', v);
  }

  reqStr(v: unknown, path: readonly PathSeg[]): string {
    if (v === undefined || v === null || v === '') {
      this.err(path, 'is required but missing');
      return '';
    }
    return this.str(v, path) ?? '';
  }

  /** One of the allowed strings, or undefined (with an error) when it is something else. */
  oneOf<T extends string>(v: unknown, path: readonly PathSeg[], allowed: readonly T[]): T | undefined {
    const s = this.str(v, path);
    if (s === undefined) return undefined;
    if ((allowed as readonly string[]).includes(s)) return s as T;
    this.err(path, `${show(s)} is not allowed; use one of: ${allowed.join(', ')}`);
    return undefined;
  }

  int(v: unknown, path: readonly PathSeg[]): number | undefined {
    if (v === undefined || v === null) return undefined;
    return typeof v === 'number' && Number.isInteger(v) ? v : this.wrong(path, 'an integer', v);
  }

  bool(v: unknown, path: readonly PathSeg[]): boolean | undefined {
    if (v === undefined || v === null) return undefined;
    return typeof v === 'boolean' ? v : this.wrong(path, 'true or false', v);
  }

  strList(v: unknown, path: readonly PathSeg[]): string[] {
    const out: string[] = [];
    this.arr(v, path).forEach((x, i) => {
      const s = this.str(x, [...path, i]);
      if (s !== undefined) out.push(s);
    });
    return out;
  }

  strMap(v: unknown, path: readonly PathSeg[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, x] of Object.entries(this.obj(v, path) ?? {})) {
      const s = this.str(x, [...path, { key: k }]);
      if (s !== undefined) out[k] = s;
    }
    return out;
  }

  /** An RFC 3339 time as ms since the epoch. */
  time(v: unknown, path: readonly PathSeg[]): number | undefined {
    const s = this.str(v, path);
    if (s === undefined) return undefined;
    const t = Date.parse(s);
    if (Number.isNaN(t)) {
      this.err(path, `${show(s)} is not an RFC 3339 time such as 2026-01-02T15:04:05Z`);
      return undefined;
    }
    return t;
  }

  /** A ResourceList in the integer units of resources.ts. */
  resources(v: unknown, path: readonly PathSeg[]): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, x] of Object.entries(this.obj(v, path) ?? {})) {
      if (typeof x !== 'string' && typeof x !== 'number') {
        this.wrong([...path, { key: k }], 'a quantity such as 500m or 2Gi', x);
        continue;
      }
      try {
        out[k] = resourceValue(k, x);
      } catch (e) {
        this.err([...path, { key: k }], (e as Error).message);
      }
    }
    return out;
  }
}

export const at = (o: Obj | undefined, k: string): unknown => (o ? o[k] : undefined);
