// The JSON shapes the simulated API server stores and serves. Objects are plain JSON; once stored they
// are deep-frozen and shared with every reader, so a reader that wants to change one copies it first
// (draft()).

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
  [k: string]: unknown;
}

export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [k: string]: unknown;
}
export type JsonObject = Record<string, unknown>;

/** One field error from validation, turned into a cause of a 422 Invalid Status. */
export interface FieldError {
  /** Dotted path, e.g. "spec.template.spec.nodeClassRef". */
  readonly field: string;
  /** Kubernetes cause reason; default FieldValueInvalid. */
  readonly type?:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueNotSupported'
    | 'FieldValueForbidden'
    | 'FieldValueDuplicate'
    | 'FieldValueTooLong'
    | 'FieldValueTypeInvalid'
    | 'FieldValueUnknown';
  readonly message: string;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** A change to one object, as the store records it (rv is the global resourceVersion after it). */
export interface StoreEvent {
  readonly type: EventType;
  readonly resource: string;
  readonly rv: number;
  readonly object: KObject;
  /** The object before this change (MODIFIED and DELETED). */
  readonly old?: KObject;
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A field of an object or an element of an array, own data only: never an inherited member such as
 * `constructor` or `__proto__`, whatever name a request supplies.
 */
export function own(v: unknown, key: string): unknown {
  if (Array.isArray(v)) return /^(0|[1-9]\d*)$/.test(key) ? v[Number(key)] : undefined;
  return isObject(v) && Object.hasOwn(v, key) ? v[key] : undefined;
}

/** Sets a field as plain data whatever its name (an assignment to `__proto__` would swap the prototype). */
export function setOwn(o: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
}

/** A mutable deep copy of a stored (frozen) object. */
export function draft<T>(obj: T): T {
  return structuredClone(obj);
}

/** Freezes a JSON value in place, recursively, and returns it. */
export function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as object)) deepFreeze(x);
  }
  return v;
}

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a as object).filter((k) => (a as JsonObject)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as JsonObject)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => jsonEqual((a as JsonObject)[k], (b as JsonObject)[k]));
}

/** How a write treats fields the schema does not know (the ?fieldValidation= query parameter). */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** The query parameters of a write that change how it is applied. */
export interface WriteOptions {
  readonly subresource?: 'status' | undefined;
  readonly fieldManager?: string | undefined;
  readonly fieldValidation?: FieldValidation | undefined;
  readonly dryRun?: boolean | undefined;
  /** Server-side apply only: take ownership despite conflicts (accepted; conflicts are not tracked). */
  readonly force?: boolean | undefined;
}
