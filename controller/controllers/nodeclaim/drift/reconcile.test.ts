// nodeclaim.drift (with nodepool.hash) on the in-memory API (test/fakes) and the recording cloud: each of Karpenter's drift
// reasons sets Drifted with its reason, in Karpenter's order, and undoing the change clears it.
import { describe, expect, it } from 'vitest';
import { nodePoolHash, parseNodePool } from '../../../../engine/index.ts';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { condition, guide } from '../../../../test/support/environment.ts';
import { newNodePoolHash } from '../../nodepool/hash/reconcile.ts';
import { newDrift } from './reconcile.ts';

type Requirement = { key: string; operator: string; values: string[] };

describe('nodeclaim.drift', () => {
  it('sets Drifted for requirements, node class and template drift, first reason first, and clears it when undone', async () => {
    const env = fakeControllerEnv();
    // nodepool.hash keeps the pool's hash annotation, which NodePoolDrifted compares the NodeClaim's with.
    env.run(newNodePoolHash(env.ctx), newDrift(env.ctx));
    await env.apply(guide('guide-07.yaml'));
    const parsed = parseNodePool(env.get('nodepools.karpenter.sh', 'production'));
    if (!parsed.ok) throw new Error('guide-07 NodePool does not parse');
    const hash = {
      'karpenter.sh/nodepool-hash': nodePoolHash(parsed.value),
      'karpenter.sh/nodepool-hash-version': 'v3',
    };
    const { providerID } = launchedNode(env, {
      name: 'production-a',
      nodePool: 'production',
      nodeClass: 'production',
      zone: 'ap-northeast-2a',
      annotations: hash,
    });
    const drifted = () => condition(env.get('nodeclaims.karpenter.sh', 'production-a'), 'Drifted');
    await env.settle();
    expect(drifted()).toBeUndefined();
    const pool = () => env.get('nodepools.karpenter.sh', 'production');
    const original = (pool().spec as { template: { spec: { requirements: Requirement[] } } }).template.spec;

    // The pool no longer allows the node's zone: RequirementsDrifted.
    const requirements = original.requirements.map((r) =>
      r.key === 'topology.kubernetes.io/zone' ? { ...r, values: ['ap-northeast-2b', 'ap-northeast-2c'] } : r,
    );
    env.api.patch('nodepools.karpenter.sh', undefined, 'production', 'merge', {
      spec: { template: { spec: { ...original, requirements } } },
    });
    await env.settle();
    expect(drifted()).toMatchObject({ status: 'True', reason: 'RequirementsDrifted' });
    env.api.patch('nodepools.karpenter.sh', undefined, 'production', 'merge', {
      spec: { template: { spec: original } },
    });
    await env.settle();
    expect(drifted()).toBeUndefined();

    // The EC2NodeClass changes and the cloud provider calls the instance drifted: its reason is written.
    const asked = env.cloud.callsOf('isDrifted').length;
    env.cloud.drift.set(providerID, 'NodeClassDrift');
    env.api.patch('ec2nodeclasses.karpenter.k8s.aws', undefined, 'production', 'merge', {
      spec: { tags: { Environment: 'staging' } },
    });
    await env.settle();
    expect(env.cloud.callsOf('isDrifted').length).toBeGreaterThan(asked);
    expect(drifted()).toMatchObject({ status: 'True', reason: 'NodeClassDrift' });

    // The template changes too: the NodePool hash is checked first.
    env.api.patch('nodepools.karpenter.sh', undefined, 'production', 'merge', {
      spec: { template: { metadata: { labels: { release: 'v2' } } } },
    });
    await env.settle();
    expect(drifted()).toMatchObject({ status: 'True', reason: 'NodePoolDrifted' });
  });

  it("re-checks a pool's NodeClaims when its spec changes, not when only its status is written", async () => {
    const env = fakeControllerEnv();
    env.run(newDrift(env.ctx));
    await env.apply(guide('guide-07.yaml'));
    launchedNode(env, {
      name: 'production-a',
      nodePool: 'production',
      nodeClass: 'production',
      zone: 'ap-northeast-2a',
    });
    await env.settle();
    const checks = () => env.cloud.callsOf('isDrifted').length;
    const before = checks();
    expect(before).toBeGreaterThan(0);
    // nodepool.counter's usage write, every few seconds per pool while its nodes change.
    env.api.patchStatus('nodepools.karpenter.sh', undefined, 'production', { resources: { cpu: '4' }, nodes: 1 });
    await env.settle();
    expect(checks()).toBe(before);
    env.api.patch('nodepools.karpenter.sh', undefined, 'production', 'merge', {
      spec: { template: { metadata: { labels: { release: 'v2' } } } },
    });
    await env.settle();
    expect(checks()).toBe(before + 1);
  });

  it("re-checks a class's NodeClaims when what drift reads changes, not when only a condition is written", async () => {
    const env = fakeControllerEnv();
    env.run(newDrift(env.ctx));
    await env.apply(guide('guide-07.yaml'));
    launchedNode(env, {
      name: 'production-a',
      nodePool: 'production',
      nodeClass: 'production',
      zone: 'ap-northeast-2a',
    });
    const ready = (at: string) => [
      { type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: at, observedGeneration: 1 },
    ];
    const ami = (id: string) => [
      { id, name: 'al2023', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] },
    ];
    const status = (body: Record<string, unknown>) =>
      env.api.patchStatus('ec2nodeclasses.karpenter.k8s.aws', undefined, 'production', body);
    status({ amis: ami('ami-1'), conditions: ready('2026-12-03T10:00:00Z') });
    await env.settle();
    const checks = () => env.cloud.callsOf('isDrifted').length;
    const before = checks();
    expect(before).toBeGreaterThan(0);
    // nodeclass.status rewrites its conditions: only a lastTransitionTime moved, no verdict can change.
    status({ conditions: ready('2026-12-03T10:05:00Z') });
    await env.settle();
    expect(checks()).toBe(before);
    // A new AMI resolved: AMIDrift may now hold, so the class's NodeClaims are checked again.
    status({ amis: ami('ami-2') });
    await env.settle();
    expect(checks()).toBe(before + 1);
  });
});
