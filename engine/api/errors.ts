// Field errors and results: what every parser and validator in engine/api returns instead of throwing.
//
// A FieldError names the object (Kind/name or Kind/namespace/name), the field path in the dotted form
// Kubernetes uses (`spec.template.spec.requirements[1].operator`, map keys in brackets:
// `spec.template.metadata.labels[karpenter.sh/nodepool]`) and says what is wrong in plain words.

/** One step of a field path: a property name, an array index or a map key. */
export type PathSeg = string | number | { readonly key: string };

export interface FieldError {
  /** "NodePool/default", "Pod/default/web-1", "EC2NodeClass/<unnamed>". */
  readonly object: string;
  /** Formatted path; "" for the object as a whole. */
  readonly path: string;
  /** The path as segments, to find the line in the source document. */
  readonly segments: readonly PathSeg[];
  readonly message: string;
  /** 1-based line in the source text, when the caller knows it (see yaml.ts). */
  readonly line?: number;
}

export type Result<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly errors: readonly FieldError[] };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail<T>(errors: readonly FieldError[]): Result<T> {
  return { ok: false, errors };
}

function formatPath(segments: readonly PathSeg[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (typeof s === 'string') out += out === '' ? s : `.${s}`;
    else out += `[${s.key}]`;
  }
  return out;
}

export function fieldError(object: string, segments: readonly PathSeg[], message: string): FieldError {
  return { object, path: formatPath(segments), segments, message };
}

/** "Kind/name" for cluster-scoped objects, "Kind/namespace/name" when a namespace is given. */
export function objectRef(obj: unknown, fallbackKind = 'Object'): string {
  const o = isRecord(obj) ? obj : {};
  const kind = typeof o['kind'] === 'string' && o['kind'] !== '' ? o['kind'] : fallbackKind;
  const meta = isRecord(o['metadata']) ? o['metadata'] : {};
  const name = typeof meta['name'] === 'string' && meta['name'] !== '' ? meta['name'] : '<unnamed>';
  const ns = typeof meta['namespace'] === 'string' && meta['namespace'] !== '' ? meta['namespace'] : undefined;
  return ns ? `${kind}/${ns}/${name}` : `${kind}/${name}`;
}

/** One line for people: "NodePool/default: spec.weight: must be at most 100 (got 150)". */
export function formatFieldError(e: FieldError): string {
  return e.path === '' ? `${e.object}: ${e.message}` : `${e.object}: ${e.path}: ${e.message}`;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Renders a value inside a message: strings quoted, long values cut. */
export function show(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v))
    return Number.isNaN(v) ? 'NaN' : `${v > 0 ? '' : '-'}infinity: a number too large to read, such as 1e400`;
  let s: string;
  try {
    s = typeof v === 'string' ? JSON.stringify(v) : v === undefined ? 'nothing' : (JSON.stringify(v) ?? String(v));
  } catch {
    s = String(v);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a number';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return 'a boolean';
  return typeof v;
}
