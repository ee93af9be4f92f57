// The NodeClaim lifecycle on its own against the simulator: NodeClaims are created here as the
// provisioner would create them.
import { afterEach, describe, expect, it } from 'vitest';
import { condition, events, guide, simulation, type Simulation } from '../../../../test/support/environment.ts';
import { wrapCloud } from '../../../../test/support/drills.ts';
import { CreateError } from '../../../cloudprovider/types.ts';
import type { KubeObject } from '../../../operator/kube.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const claim = (name: string, o: { nodeClass?: string; types?: string[]; capacity?: string[] } = {}): KubeObject => ({
  apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim',
  metadata: { name, labels: { 'karpenter.sh/nodepool': 'spot-diverse', 'karpenter.k8s.aws/ec2nodeclass': o.nodeClass ?? 'default', team: 'a' } },
  spec: {
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: o.nodeClass ?? 'default' },
    requirements: [
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: o.types ?? ['c5.large', 'm5.large'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: o.capacity ?? ['on-demand'] },
    ],
    resources: { requests: { cpu: '1', memory: '1Gi' } },
  },
});

const get = (s: Simulation, name: string) => s.cluster.api.find('nodeclaims.karpenter.sh', undefined, name);
const ONLY = ['nodeclass.status', 'nodeclaim.lifecycle'];

describe('nodeclaim.lifecycle', () => {
  it('adds the finalizer, launches once, and records the instance in labels and status', async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-03.yaml'));
    await sim.operator.kube.create('NodeClaim', claim('a'));
    await sim.settle();
    const nc = get(sim, 'a')!;
    expect(nc.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    expect(condition(nc, 'Launched')?.status).toBe('True');
    expect(condition(nc, 'Registered')).toMatchObject({ status: 'Unknown', reason: 'NodeNotFound' });
    expect(condition(nc, 'Ready')?.status).toBe('Unknown');
    const status = nc.status as { providerID: string; imageID: string; capacity: Record<string, string>; allocatable: Record<string, string> };
    expect(status.providerID).toMatch(/^aws:\/\/\/ap-northeast-2[a-d]\/i-/);
    expect(status.imageID).toMatch(/^ami-/);
    expect(status.capacity).toMatchObject({ cpu: '2' });
    expect(nc.metadata.labels).toMatchObject({ team: 'a', 'node.kubernetes.io/instance-type': 'c5.large', 'karpenter.sh/capacity-type': 'on-demand' });
    expect(sim.provider.all()).toHaveLength(1);
    // Touching the NodeClaim again does not launch a second instance.
    await sim.operator.kube.patch('NodeClaim', 'a', { metadata: { annotations: { touched: 'yes' } } });
    await sim.settle();
    expect(sim.provider.all()).toHaveLength(1);
  });

  it('deletes the NodeClaim with an InsufficientCapacityError event when no offering has capacity', async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-03.yaml'));
    sim.provider.blockCapacity({ instanceType: 'c5.large' });
    sim.provider.blockCapacity({ instanceType: 'm5.large' });
    await sim.operator.kube.create('NodeClaim', claim('a'));
    await sim.settle();
    expect(get(sim, 'a')?.metadata.deletionTimestamp).toBeDefined();
    expect(events(sim, 'InsufficientCapacityError').map((e) => (e['involvedObject'] as { name: string }).name)).toEqual(['a']);
    expect(await sim.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'insufficient_capacity' })).toBe(1);
  });

  it('deletes a NodeClaim whose EC2NodeClass does not exist', async () => {
    sim = await simulation({ only: ONLY });
    await sim.operator.kube.create('NodeClaim', claim('a', { nodeClass: 'missing' }));
    await sim.settle();
    expect(get(sim, 'a')?.metadata.deletionTimestamp).toBeDefined();
    expect(events(sim, 'NodeClassNotReady')).toHaveLength(1);
  });

  it('deletes a NodeClaim whose node has not registered 15 minutes after launch', async () => {
    sim = await simulation({ only: ONLY, kubeletDelays: { registerMs: 60 * 60_000 } });
    await sim.apply(guide('guide-03.yaml'));
    await sim.operator.kube.create('NodeClaim', claim('a'));
    await sim.settle();
    await sim.clock.advance(14 * 60_000);
    expect(get(sim, 'a')?.metadata.deletionTimestamp).toBeUndefined();
    await sim.clock.advance(60_000);
    expect(get(sim, 'a')?.metadata.deletionTimestamp).toBeDefined();
    expect(await sim.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'registration_timeout' })).toBe(1);
  });

  it('deletes a NodeClaim whose launch keeps failing 5 minutes after Launched last moved (the failed launch does not hold it)', async () => {
    let attempts = 0;
    sim = await simulation({
      only: ONLY,
      cloud: (cp) => wrapCloud(cp, {
        create: async () => {
          attempts++;
          throw new CreateError('launching: the EC2 endpoint did not answer', 'LaunchFailed');
        },
      }),
    });
    await sim.apply(guide('guide-03.yaml'));
    await sim.operator.kube.create('NodeClaim', claim('a'));
    await sim.settle();
    expect(condition(get(sim, 'a')!, 'Launched')).toMatchObject({ status: 'Unknown', reason: 'LaunchFailed' });
    await sim.clock.advance(4 * 60_000);
    expect(get(sim, 'a')?.metadata.deletionTimestamp).toBeUndefined();
    // The next retry after the 5 minutes (the failed launch backs off, 30 s at most) deletes it.
    await sim.clock.advance(90_000);
    expect(get(sim, 'a')?.metadata.deletionTimestamp).toBeDefined();
    expect(attempts).toBeGreaterThan(5);
    expect(await sim.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'launch_timeout' })).toBe(1);
    expect(events(sim, 'NodeClaimTimedOut').map((e) => e['message'])).toEqual(['NodeClaim a did not launch within 5 minutes; deleting it']);
  });
});
