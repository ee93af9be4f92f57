// Reading untyped Kubernetes objects (Pods, Nodes, DaemonSets, ...) field by field, collecting a
// FieldError for every field of the wrong type instead of throwing. One Decoder per object.
import { resourceValue } from '../domain/resources.ts';
import { fieldError, isRecord, show, typeName, type FieldError, type PathSeg } from './errors.ts';

export type Obj = Record<string, unknown>;

export class Decoder {
  readonly errors: FieldError[] = [];

  constructor(readonly object: string) {}

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
