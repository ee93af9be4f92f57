// The launch step's record of launched instances: it stops a second create while the Launched=True write has not
// reached cluster state, and is dropped once it has.
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { guide } from '../../../../test/support/environment.ts';
import type { KubeObject } from '../../../operator/kube.ts';
import { draftOf } from './draft.ts';
import { Launcher } from './launch.ts';

const claim: KubeObject = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name: 'a', labels: { 'karpenter.sh/nodepool': 'spot-diverse' } },
  spec: {
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
    requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5.large'] }],
    resources: { requests: { cpu: '1' } },
  },
};

/** How many launched instances the launcher remembers. */
const remembered = (l: Launcher): number => (l as unknown as { launched: Map<string, unknown> }).launched.size;

describe('Launcher', () => {
  it('launches once while cluster state does not show Launched=True, then forgets the instance', async () => {
    const env = fakeControllerEnv();
    await env.apply(guide('guide-03.yaml'));
    await env.kube.create('NodeClaim', claim);
    await env.settle();
    const launcher = new Launcher(env.ctx, env.ctx.cloudProvider);
    const held = () => env.ctx.cluster.nodeClaim('a')!;
    // Twice from the NodeClaim as created (the status write not shown yet): one instance, remembered.
    for (let i = 0; i < 2; i++) await launcher.reconcile(draftOf(held().obj, held().info));
    expect(env.cloud.callsOf('create')).toHaveLength(1);
    expect(remembered(launcher)).toBe(1);
    // The write shown: no create, and the record is gone.
    const d = draftOf(held().obj, held().info);
    await launcher.reconcile(d);
    await env.kube.patchStatus('NodeClaim', 'a', { ...d.status, conditions: d.conditions });
    await env.settle();
    await launcher.reconcile(draftOf(held().obj, held().info));
    expect(env.cloud.callsOf('create')).toHaveLength(1);
    expect(remembered(launcher)).toBe(0);
  });
});
