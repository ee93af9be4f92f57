// What a reconcile returns: done, or "look at this key again after ms". Sub-reconcilers' results are
// merged with minResult so the soonest requeue wins (controller-runtime's result.Min).

export type ReconcileResult = { readonly kind: 'done' } | { readonly kind: 'requeueAfter'; readonly ms: number };

export const done: ReconcileResult = Object.freeze({ kind: 'done' });

export function requeueAfter(ms: number): ReconcileResult {
  return { kind: 'requeueAfter', ms: Math.max(0, Math.ceil(ms)) };
}

/** The sooner of two results: any requeue beats done, and the shorter requeue beats the longer. */
export function minResult(...results: readonly ReconcileResult[]): ReconcileResult {
  let best: ReconcileResult = done;
  for (const r of results) {
    if (r.kind === 'done') continue;
    if (best.kind === 'done' || r.ms < best.ms) best = r;
  }
  return best;
}
