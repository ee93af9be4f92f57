// The fence decorator: the provider's mutating calls (create, delete) pass only while the operator's fence
// is open, i.e. while this replica holds the leader lease (controller/operator/fence.ts). Reads pass
// always. A stepped-down leader can therefore neither launch nor terminate an instance, even from a
// reconcile that was in flight when it lost the lease.
import type { Fence } from '../operator/fence.ts';
import type { CloudProvider, InstanceTagging } from './types.ts';

export function withFence(cp: CloudProvider, fence: Fence): CloudProvider {
  return {
    name: cp.name,
    create: async (req) => {
      fence.check(`launching nodeclaim ${req.nodeClaimName}`);
      return cp.create(req);
    },
    delete: async (id) => {
      fence.check(`terminating instance ${id}`);
      return cp.delete(id);
    },
    get: (id) => cp.get(id),
    list: () => cp.list(),
    getInstanceTypes: (np) => cp.getInstanceTypes(np),
    isDrifted: (q) => cp.isDrifted(q),
    repairPolicies: () => cp.repairPolicies(),
    ...(cp.interruptions ? { interruptions: cp.interruptions } : {}),
    ...(cp.nodeClasses ? { nodeClasses: cp.nodeClasses } : {}),
    ...(cp.instanceTagging ? { instanceTagging: fencedTagging(cp.instanceTagging, fence) } : {}),
  };
}

/** Tag writes are cloud writes: only the leader makes them. */
function fencedTagging(t: InstanceTagging, fence: Fence): InstanceTagging {
  return {
    taggedAnnotations: t.taggedAnnotations,
    tag: async (claim) => {
      fence.check(`tagging the instance of nodeclaim ${claim.name}`);
      return t.tag(claim);
    },
  };
}
