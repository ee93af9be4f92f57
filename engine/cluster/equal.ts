// Structural equality of snapshot data: plain objects (own keys, a key holding undefined counts), arrays,
// Maps and Sets (instance-type requirements), strings, numbers, booleans. What the model mirror uses to tell
// an object that was rebuilt with the same content (a state node joined again, a pod re-parsed after a
// relist) from one that changed.
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null)
    return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a)) return Array.isArray(b) && sameList(a, b);
  if (a instanceof Map) return b instanceof Map && sameMap(a, b);
  if (a instanceof Set) return b instanceof Set && a.size === b.size && [...a].every((x) => b.has(x));
  if (Array.isArray(b) || b instanceof Map || b instanceof Set) return false;
  return sameRecord(a as Record<string, unknown>, b as Record<string, unknown>);
}

function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
  return true;
}

function sameMap(a: ReadonlyMap<unknown, unknown>, b: ReadonlyMap<unknown, unknown>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (!b.has(k) || !sameData(v, b.get(k))) return false;
  return true;
}

function sameRecord(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  let n = 0;
  for (const k in a) {
    if (!(k in b) || !sameData(a[k], b[k])) return false;
    n++;
  }
  for (const _ in b) n--;
  return n === 0;
}
