// The overlaid instance types every controller sees with the gate NodeOverlay on (Karpenter core
// pkg/controllers/nodeoverlay/store.go and pkg/cloudprovider/overlay, main after v1.14.1): the nodeoverlay
// controller evaluates the overlays and swaps in the result; the cloud provider every other controller uses
// applies it to the instance types of each NodePool. A NodePool the controller has not evaluated yet gets an
// UnevaluatedNodePoolError instead of un-overlaid types, so no decision is made on prices the user overrode.
import { applyOverlays, type InstanceType, type NodePool, type OverlayUpdates } from '../../../engine/index.ts';
import type { CloudProvider, LaunchRequest } from '../../cloudprovider/types.ts';

export class UnevaluatedNodePoolError extends Error {
  override name = 'UnevaluatedNodePoolError';
  constructor(readonly nodePool: string) {
    super(`nodepool ${nodePool} has not been evaluated against the NodeOverlays yet`);
  }
}

export class OverlayStore {
  private updates: OverlayUpdates = new Map();
  private evaluated: ReadonlySet<string> = new Set();

  /** The controller's latest evaluation, for the NodePools it covered. */
  swap(updates: OverlayUpdates, evaluatedPools: Iterable<string>): void {
    this.updates = updates;
    this.evaluated = new Set(evaluatedPools);
  }

  apply(pool: string, types: readonly InstanceType[]): InstanceType[] {
    if (!this.evaluated.has(pool)) throw new UnevaluatedNodePoolError(pool);
    return applyOverlays(this.updates, pool, types);
  }

  /**
   * `cp` with its instance types overlaid: those it lists for a NodePool, and those a launch for a NodePool's
   * NodeClaim fits against (a NodeClaim without a NodePool launches from the provider's own types).
   */
  decorate(cp: CloudProvider): CloudProvider {
    return {
      ...cp,
      getInstanceTypes: async (pool: NodePool) => this.apply(pool.name, await cp.getInstanceTypes(pool)),
      create: (req: LaunchRequest) =>
        cp.create(req.nodePoolName ? { ...req, overlay: (types) => this.apply(req.nodePoolName, types) } : req),
    };
  }
}
