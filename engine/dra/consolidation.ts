// The DRA world a disruption simulation schedules against (docs/karpenter/disruption.md §2.7 with IgnoreDRARequests=false):
// the nodes being removed publish nothing (their ResourceSlices are not scheduling targets), and claims held only
// by pods that move off them are deallocated, so those pods' claims are allocated again wherever they land. A
// claim that any staying pod still holds keeps its devices (and a shared device keeps the other claims' shares).
import type { DraState } from '../domain/dra.ts';

export function draForSimulation(
  dra: DraState,
  removedNodes: ReadonlySet<string>,
  movedPods: ReadonlySet<string>,
): DraState {
  return {
    ...dra,
    resourceSlices: dra.resourceSlices.filter((s) => s.nodeName === undefined || !removedNodes.has(s.nodeName)),
    resourceClaims: dra.resourceClaims.map((c) => {
      if (!c.allocation || c.reservedFor.length === 0 || !c.reservedFor.every((uid) => movedPods.has(uid))) return c;
      const { allocation: _freed, ...rest } = c;
      return { ...rest, reservedFor: [] };
    }),
  };
}
