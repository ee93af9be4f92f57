// Launch (docs/karpenter/disruption.md §5.4): create the instance through the cloud provider once. An in-memory
// record of launched instances per NodeClaim uid stops a second create when the status write that says
// Launched=True has not reached the informer yet; it is dropped once cluster state shows Launched=True.
import type { CloudProvider, Instance, LaunchRequest } from '../../../cloudprovider/types.ts';
import { isCreateError, isInsufficientCapacity, isNodeClassNotReady } from '../../../cloudprovider/types.ts';
import { targetOf } from '../../../operator/events.ts';
import { ignoreNotFound } from '../../../operator/kube.ts';
import { errText } from '../../../operator/runtime.ts';
import { quantities } from '../../provisioning/nodeclaim.ts';
import type { ControllerContext } from '../../context.ts';
import { conditionIs, deleted, next, setCondition, type Draft, type Step } from './draft.ts';

function launchRequest(d: Draft): LaunchRequest {
  const i = d.info;
  return {
    nodeClaimName: i.name,
    nodePoolName: i.nodePoolName ?? '',
    nodeClassName: i.nodeClassRef.name,
    requirements: i.requirements,
    requests: i.requests,
    labels: i.labels,
    annotations: i.annotations,
    taints: i.taints,
    startupTaints: i.startupTaints,
  };
}

export class Launcher {
  private readonly launched = new Map<string, Instance>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cp: CloudProvider,
  ) {}

  forget(uid: string): void {
    this.launched.delete(uid);
  }

  async reconcile(d: Draft): Promise<Step> {
    const uid = d.obj.metadata.uid ?? d.info.name;
    if (conditionIs(d, 'Launched', 'True')) {
      // The NodeClaim as cluster state holds it records the launch: the record has done its work (Karpenter keeps its
      // for an hour, go-cache; this one would stay for the NodeClaim's life).
      this.launched.delete(uid);
      return next;
    }
    if (conditionIs(d, 'Launched', 'False')) return next;
    const now = this.ctx.clock.now();
    let instance = this.launched.get(uid);
    if (!instance) {
      try {
        instance = await this.cp.create(launchRequest(d));
      } catch (err) {
        return this.failed(d, err, now);
      }
      this.launched.set(uid, instance);
    }
    d.labels = { ...instance.labels, ...d.labels };
    d.annotations = { ...instance.annotations, ...d.annotations };
    d.status['providerID'] = instance.providerID;
    if (instance.imageID) d.status['imageID'] = instance.imageID;
    d.status['capacity'] = quantities(instance.capacity);
    d.status['allocatable'] = quantities(instance.allocatable);
    setCondition(d, 'Launched', 'True', now);
    this.ctx.log.info(
      {
        providerID: instance.providerID,
        instanceType: instance.instanceType,
        zone: instance.zone,
        capacityType: instance.capacityType,
        allocatable: d.status['allocatable'],
      },
      'launched nodeclaim',
    );
    return next;
  }

  private async failed(d: Draft, err: unknown, now: number): Promise<Step> {
    const name = d.info.name;
    const pool = d.info.nodePoolName ?? '';
    const remove = async (reason: string): Promise<Step> => {
      await this.ctx.kube.delete('NodeClaim', name).catch(ignoreNotFound);
      this.ctx.metrics.nodeClaimsDisrupted.inc({
        reason,
        nodepool: pool,
        capacity_type: d.labels['karpenter.sh/capacity-type'] ?? '',
      });
      return deleted;
    };
    if (isInsufficientCapacity(err)) {
      this.ctx.events.publish({
        involved: targetOf(d.obj, 'NodeClaim'),
        type: 'Warning',
        reason: 'InsufficientCapacityError',
        message: `NodeClaim ${name} event: ${err.message}`,
      });
      this.ctx.log.warn(
        { nodeclaim: name, err: err.message, offerings: err.offerings.length },
        'insufficient capacity; deleting nodeclaim',
      );
      return remove('insufficient_capacity');
    }
    if (isNodeClassNotReady(err)) {
      this.ctx.events.publish({
        involved: targetOf(d.obj, 'NodeClaim'),
        type: 'Warning',
        reason: 'NodeClassNotReady',
        message: `NodeClaim ${name} event: ${err.message}`,
      });
      return remove('nodeclass_not_ready');
    }
    const reason = isCreateError(err) ? err.reason : 'LaunchFailed';
    setCondition(d, 'Launched', 'Unknown', now, reason, errText(err).slice(0, 300));
    throw new Error(`launching nodeclaim ${name}`, { cause: err });
  }
}
