// The plan of a provisioning decision solved ahead of time (ClusterEngine.speculate), and the rule for when a
// later decision may have it instead of solving: the model is still at the version the plan was solved on and
// the decision's delta changes nothing but the clock (a provisioning solve does not read the clock:
// model/input.ts), and the decision's operation (its pods, by their places in the pending list, and its
// options) is byte for byte the one solved. The solver is deterministic, so that plan is the one a solve at the
// decision would make. A plan the improvement phase's wall-clock safety net cut short is not: it is never kept.
//
// A speculative solve can be called off (`SpeculationFlag`): the caller saw its batch change, so no decision will
// take that plan, and the worker stops spending its time on it. The flag is shared memory the worker reads while it
// solves: a solve not yet begun is skipped, one under way reads its clock as past the improvement phase's deadline
// (solver-as budget.ts: read once per 200,000 units of work) and finishes at once, cut short (`truncated`), so its
// plan is never kept.
// Until then, every call queued behind it on the model (the preload of the new pods, the next speculative solve,
// the decision at the close) waited for the whole solve.
import type { ProvisionPlan } from '../model/types.ts';
import type { SnapshotDelta } from './delta.ts';

/** Whether the delta changes nothing but the model's clock. */
export function clockOnly(d: SnapshotDelta): boolean {
  for (const k of Object.keys(d)) if (k !== 'base' && k !== 'version' && k !== 'now') return false;
  return true;
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);

/**
 * What a delta carries beyond the clock, for a log line: each field's count (a list's length, 1 for the rest), a
 * few of the pods and nodes it names, and the fields its pod patches set.
 */
export function deltaContents(d: SnapshotDelta): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d)) {
    if (k === 'base' || k === 'version' || k === 'now' || v === undefined) continue;
    out[k] = Array.isArray(v) ? v.length : 1;
  }
  const few = <T>(xs: readonly T[] | undefined, name: (x: T) => string): string[] | undefined =>
    xs?.length ? xs.slice(0, 3).map(name) : undefined;
  const samples = {
    podsSample: few(d.pods, (p) => `${p.namespace}/${p.name}${p.nodeName ? ` on ${p.nodeName}` : ''}`),
    nodesSample: few(d.nodes, (n) => n.node.name),
    nodesRemovedSample: few(d.nodesRemoved, (n) => n),
    podPatchFields: d.podPatches?.length
      ? [...new Set(d.podPatches.flatMap(([, f]) => Object.keys(f)))].sort()
      : undefined,
  };
  for (const [k, v] of Object.entries(samples)) if (v) out[k] = v;
  return out;
}

/** Why a decision did not take the kept plan: none was kept, the model changed since, or it asks for other pods or options. */
export type NotTaken = 'none kept' | 'model changed' | 'other pods or options';

export class SpeculativePlan {
  private kept: { readonly version: number; readonly op: Uint8Array; readonly plan: ProvisionPlan } | undefined;

  /** Keeps the plan the model at `version` gave for the packed operation `op` (unless it was cut short). */
  keep(version: number, op: Uint8Array, plan: ProvisionPlan): void {
    this.kept = plan.truncated ? undefined : { version, op, plan };
  }

  /** The kept plan, if a decision with this delta against a model at `version`, and this operation, may have it. */
  take(version: number, delta: SnapshotDelta, op: Uint8Array): ProvisionPlan | undefined {
    const k = this.kept;
    return k && this.whyNot(version, delta, op) === undefined ? k.plan : undefined;
  }

  /** Why `take` would give no plan (undefined: it would give one). */
  whyNot(version: number, delta: SnapshotDelta, op: Uint8Array): NotTaken | undefined {
    const k = this.kept;
    if (!k) return 'none kept';
    if (k.version !== version || delta.base !== version || !clockOnly(delta)) return 'model changed';
    return sameBytes(k.op, op) ? undefined : 'other pods or options';
  }

  /**
   * Another call moved the model from `base` to `version` with a delta of nothing but the clock, and an operation that
   * leaves the model as it was (not a carryOut): a provisioning solve reads neither, so the kept plan is still the
   * one a solve at `version` would make, and stays takeable there.
   */
  carry(base: number, version: number): void {
    if (this.kept?.version === base) this.kept = { ...this.kept, version };
  }

  forget(): void {
    this.kept = undefined;
  }
}

/** A speculative solve's call-off flag, in memory the caller and the model's worker share. */
export class SpeculationFlag {
  readonly buffer = new SharedArrayBuffer(4);

  /** No decision will take this solve's plan: the worker stops as soon as it reads the flag. */
  callOff(): void {
    Atomics.store(new Int32Array(this.buffer), 0, 1);
  }
}

/** Whether the solve whose flag is `buffer` was called off (no flag: it is not a speculative solve). */
export function calledOff(buffer: SharedArrayBuffer | undefined): boolean {
  return buffer !== undefined && Atomics.load(new Int32Array(buffer), 0) === 1;
}
