// provision() in the calling thread: where pending pods go and which NodeClaims to launch, for a snapshot of
// the cluster. Pool workers, disruption simulations, benchmarks and tests call it; the controller reaches it
// only through the pooled Engine (engine/engine.ts).
import type { Pod, Snapshot } from '../domain/types.ts';
import { provisionInput, type ProvisionOptions as InputOptions } from '../model/input.ts';
import type { ProvisionPlan, ProvisionSolver } from '../model/types.ts';
import { WasmSolver } from './wasm.ts';

interface ProvisionOptions extends InputOptions {
  /** The solver to use; default: a release wasm solver with its improvement phase. */
  readonly solver?: ProvisionSolver;
}

/** Plans pending pods onto existing and in-flight nodes and new NodeClaims. */
export async function provision(
  s: Snapshot,
  pending: readonly Pod[],
  opts: ProvisionOptions = {},
): Promise<ProvisionPlan> {
  const solver = opts.solver ?? new WasmSolver();
  return solver.solve(provisionInput(s, pending, opts));
}
