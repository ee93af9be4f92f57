// Strategic merge patch and server-side apply, approximated for the core types.
//
// The real server reads patch strategies from Go struct tags. Here a field-name table stands in for them:
// lists of objects named in MERGE_KEYS merge item by item on that key (containers by name, conditions by
// type, ...), `finalizers` merges as a set, and every other list replaces. The directives kubectl sends
// ($patch, $setElementOrder/..., $deleteFromPrimitiveList/..., $retainKeys) are understood.
//
// Server-side apply is "create or merge": the applied configuration is merged like a strategic patch
// (lists of custom resources replace, as they are atomic by default), and fields this field manager
// applied last time but left out now are removed. Field ownership conflicts are not tracked: a
// non-forced apply never fails with 409 here.
//
// Every field is read and written as own data (own/setOwn): a key named `constructor` or `prototype` is
// just a field, never a way into Object's prototype.
import { errors } from './errors.ts';
import { isObject, own, setOwn, type JsonObject } from './types.ts';

const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  imagePullSecrets: 'name',
  resourceClaims: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  conditions: 'type',
  addresses: 'type',
  ownerReferences: 'uid',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
};
const SET_LISTS = new Set(['finalizers']);

/** The merge key for a list field, or undefined for a list that replaces. */
function mergeKeyFor(field: string, items: readonly unknown[]): string | undefined {
  if (field === 'ports') {
    const sample = items.find(isObject);
    return sample && 'containerPort' in sample ? 'containerPort' : 'port';
  }
  return MERGE_KEYS[field];
}

function mergeKeyedList(original: unknown[], patch: unknown[], key: string): unknown[] {
  const out = original.map((x) => structuredClone(x));
  const replaceAll = patch.some((p) => isObject(p) && p.$patch === 'replace');
  if (replaceAll) return patch.filter((p) => !(isObject(p) && p.$patch === 'replace')).map((x) => structuredClone(x));
  for (const item of patch) {
    if (!isObject(item) || item[key] === undefined) {
      out.push(structuredClone(item));
      continue;
    }
    const i = out.findIndex((o) => isObject(o) && o[key] === item[key]);
    if (item.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) {
      out[i] = strategicMerge(out[i], item);
    } else {
      out.push(strategicMerge({}, item));
    }
  }
  return out;
}

/** A list field merged: a set list gains what it lacks, a keyed list merges item by item, others replace. */
function mergeList(field: string, cur: unknown[], v: unknown[], keyed: boolean): unknown[] {
  if (SET_LISTS.has(field)) return [...cur, ...v.filter((x) => !cur.includes(x))];
  const key = keyed ? mergeKeyFor(field, [...v, ...cur]) : undefined;
  return key ? mergeKeyedList(cur, v, key) : structuredClone(v);
}

const listAt = (o: JsonObject, k: string): unknown[] => {
  const v = own(o, k);
  return Array.isArray(v) ? v : [];
};

/** A strategic merge patch applied to a copy of `original`. */
export function strategicMerge(original: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  if (own(patch, '$patch') === 'replace') {
    const { $patch: _, ...rest } = patch;
    return structuredClone(rest);
  }
  if (own(patch, '$patch') === 'delete') return undefined;
  const out: JsonObject = isObject(original) ? structuredClone(original) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const drop = new Set(Array.isArray(v) ? v : []);
      if (Array.isArray(own(out, field)))
        setOwn(
          out,
          field,
          listAt(out, field).filter((x) => !drop.has(x)),
        );
    } else if (v === null) {
      delete out[k];
    } else if (Array.isArray(v)) {
      setOwn(out, k, mergeList(k, listAt(out, k), v, true));
    } else {
      const merged = strategicMerge(own(out, k), v);
      if (merged === undefined) delete out[k];
      else setOwn(out, k, merged);
    }
  }
  const retain = own(patch, '$retainKeys');
  if (Array.isArray(retain)) {
    const keep = new Set(retain as string[]);
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  return out;
}

/** Merges an applied configuration: like a strategic merge for core types, like a merge patch for CRDs. */
function applyMerge(live: unknown, applied: unknown, keyedLists: boolean): unknown {
  if (!isObject(applied)) return structuredClone(applied);
  const out: JsonObject = isObject(live) ? structuredClone(live) : {};
  for (const [k, v] of Object.entries(applied)) {
    if (v === null) continue; // null in an applied config means "no opinion"
    if (Array.isArray(v)) setOwn(out, k, mergeList(k, listAt(out, k), v, keyedLists));
    else setOwn(out, k, applyMerge(own(out, k), v, keyedLists));
  }
  return out;
}

/** Removes from `live` what `prev` (this manager's last apply) set and `cur` (this apply) leaves out. */
function prune(live: JsonObject, prev: JsonObject, cur: JsonObject, keyedLists: boolean): void {
  for (const [k, pv] of Object.entries(prev)) {
    const cv = own(cur, k);
    const lv = own(live, k);
    if (cv === undefined || cv === null) {
      if (SET_LISTS.has(k) && Array.isArray(pv) && Array.isArray(lv))
        setOwn(
          live,
          k,
          lv.filter((x) => !pv.includes(x)),
        );
      else delete live[k];
    } else if (isObject(pv) && isObject(cv) && isObject(lv)) {
      prune(lv, pv, cv, keyedLists);
    } else if (Array.isArray(pv) && Array.isArray(cv) && Array.isArray(lv)) {
      const key = keyedLists ? mergeKeyFor(k, pv) : undefined;
      if (SET_LISTS.has(k))
        setOwn(
          live,
          k,
          lv.filter((x) => !pv.includes(x) || cv.includes(x)),
        );
      else if (key) {
        const keep = new Set(cv.filter(isObject).map((x) => x[key]));
        const dropped = new Set(
          pv
            .filter(isObject)
            .map((x) => x[key])
            .filter((x) => !keep.has(x)),
        );
        setOwn(
          live,
          k,
          lv.filter((x) => !(isObject(x) && dropped.has(x[key]))),
        );
      }
    }
  }
}

/**
 * Server-side apply of `applied` over `live` (undefined when creating). `prev` is what the same field
 * manager applied last time on this object, if anything.
 */
export function serverSideApply(
  live: JsonObject | undefined,
  applied: unknown,
  prev: JsonObject | undefined,
  keyedLists: boolean,
): JsonObject {
  if (!isObject(applied)) throw errors.badRequest('apply: the body must be an object');
  const base: JsonObject = live ? structuredClone(live) : {};
  if (prev) prune(base, prev, applied, keyedLists);
  return applyMerge(base, applied, keyedLists) as JsonObject;
}
