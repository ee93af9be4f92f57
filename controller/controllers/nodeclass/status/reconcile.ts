// nodeclass.status for the simulator: resolves each EC2NodeClass against the simulated account
// (cloudprovider/sim/network.ts) the way the AWS provider's nodeclass controller resolves it against EC2,
// IAM and SSM, and writes status: subnets (and so zones), security groups, AMIs, instance profile, and
// the AMIsReady / SubnetsReady / SecurityGroupsReady / InstanceProfileReady / ValidationSucceeded
// conditions rolled up into Ready. A selector that matches nothing leaves the class not Ready, which is
// what a user sees when subnets are not tagged (guide §13).
import { simImageId, selectSecurityGroups, selectSubnets, type SimNetwork } from '../../../cloudprovider/sim/network.ts';
import { conditionsOf, sameConditions, withCondition, type KubeCondition } from '../../../operator/conditions.ts';
import { canonicalJson, stableHash } from '../../../operator/hash.ts';
import { done, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';

export function newSimNodeClassStatus(ctx: ControllerContext, network: SimNetwork): Controller {
  async function reconcile(name: string): Promise<ReconcileResult> {
    const entry = ctx.cluster.nodeClass(name);
    if (!entry || entry.obj.metadata.deletionTimestamp) return done;
    const now = ctx.clock.now();
    const gen = entry.obj.metadata.generation;
    const g = gen !== undefined ? { generation: gen } : {};
    let conds: KubeCondition[] = conditionsOf(entry.obj);
    const set = (type: string, ok: boolean, reason: string, message: string): void => {
      conds = withCondition(conds, type, ok ? 'True' : 'False', now, { reason: ok ? type : reason, message: ok ? '' : message, ...g });
    };
    const nc = entry.nodeClass;
    if (!nc) {
      set('ValidationSucceeded', false, 'ValidationFailed', entry.errors.join('; '));
      set('Ready', false, 'ValidationSucceededNotTrue', 'ValidationSucceeded is False');
      return write(name, entry.obj.status ?? {}, { conditions: conds });
    }
    const subnets = selectSubnets(network, nc);
    const groups = selectSecurityGroups(network, nc);
    const arches = nc.amiFamily.startsWith('Windows') ? ['amd64'] : ['amd64', 'arm64'];
    const amis = arches.map((arch) => ({ id: simImageId(nc.amiFamily, arch), name: `${nc.amiFamily.toLowerCase()}-${arch}-sim`, requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: [arch] }] }));
    set('SubnetsReady', subnets.length > 0, 'SubnetsNotFound', `SubnetSelector did not match any subnets in ${network.region} (the simulated subnets are tagged karpenter.sh/discovery=${network.clusterName}, network-type=private)`);
    set('SecurityGroupsReady', groups.length > 0, 'SecurityGroupsNotFound', 'SecurityGroupSelector did not match any SecurityGroups');
    set('AMIsReady', true, 'AMINotFound', '');
    set('InstanceProfileReady', Boolean(nc.spec.role || nc.spec.instanceProfile), 'InstanceProfileNotFound', 'neither role nor instanceProfile is set');
    set('ValidationSucceeded', true, 'ValidationFailed', '');
    const failing = conds.filter((c) => c.type !== 'Ready' && c.status !== 'True').map((c) => c.type);
    conds = withCondition(conds, 'Ready', failing.length ? 'False' : 'True', now, { reason: failing.length ? 'UnhealthyDependents' : 'Ready', message: failing.length ? `${failing.join(', ')} not True` : '', ...g });
    return write(name, entry.obj.status ?? {}, {
      subnets: subnets.map((s) => ({ id: s.id, zone: s.zone, zoneID: s.zoneID })),
      securityGroups: groups.map((s) => ({ id: s.id, name: s.name })),
      amis,
      ...(nc.spec.role ? { instanceProfile: `${network.clusterName}_${stableHash([network.region, name, nc.spec.role])}` } : nc.spec.instanceProfile ? { instanceProfile: nc.spec.instanceProfile } : {}),
      conditions: conds,
    });
  }

  async function write(name: string, old: Record<string, unknown>, next: Record<string, unknown>): Promise<ReconcileResult> {
    const { conditions: oc, ...oldRest } = old;
    const { conditions: nc, ...newRest } = next;
    const same = canonicalJson(oldRest) === canonicalJson({ ...oldRest, ...newRest }) && sameConditions((oc ?? []) as KubeCondition[], nc as KubeCondition[]);
    if (same) return done;
    ctx.cluster.applyNodeClass(await ctx.kube.patchStatus('EC2NodeClass', name, next));
    return done;
  }

  return {
    name: 'nodeclass.status',
    reconcile,
    register(enqueue) {
      for (const c of ctx.cluster.nodeClasses()) enqueue(c.obj.metadata.name!);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'EC2NodeClass' && c.type === 'upsert') enqueue(c.name);
      });
    },
  };
}
