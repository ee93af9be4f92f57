// The plan of a provisioning decision solved ahead of time (ClusterEngine.speculate), and the rule for when a
// later decision may have it instead of solving: the model is still at the version the plan was solved on and
// the decision's delta changes nothing but the clock (a provisioning solve does not read the clock:
// model/input.ts), and the decision's operation (its pods, by their places in the pending list, and its
// options) is byte for byte the one solved. The solver is deterministic, so that plan is the one a solve at the
// decision would make. A plan the improvement phase's wall-clock safety net cut short is not: it is never kept.
import type { ProvisionPlan } from '../model/types.ts';
import type { SnapshotDelta } from './delta.ts';

/** Whether the delta changes nothing but the model's clock. */
function clockOnly(d: SnapshotDelta): boolean {
  for (const k of Object.keys(d)) if (k !== 'base' && k !== 'version' && k !== 'now') return false;
  return true;
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);

export class SpeculativePlan {
  private kept: { readonly version: number; readonly op: Uint8Array; readonly plan: ProvisionPlan } | undefined;

  /** Keeps the plan the model at `version` gave for the packed operation `op` (unless it was cut short). */
  keep(version: number, op: Uint8Array, plan: ProvisionPlan): void {
    this.kept = plan.truncated ? undefined : { version, op, plan };
  }

  /** The kept plan, if a decision with this delta against a model at `version`, and this operation, may have it. */
  take(version: number, delta: SnapshotDelta, op: Uint8Array): ProvisionPlan | undefined {
    const k = this.kept;
    return k && k.version === version && delta.base === version && clockOnly(delta) && sameBytes(k.op, op)
      ? k.plan
      : undefined;
  }

  forget(): void {
    this.kept = undefined;
  }
}
