// The NodeClaim finalizer: a NodeClaim deleted before its node registered terminates its instance and
// goes; one with a node waits for the node to go first.
import { afterEach, describe, expect, it } from 'vitest';
import {
  deployment,
  guide,
  nodeClaims,
  nodes,
  running,
  simulation,
  type Simulation,
} from '../../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('nodeclaim.termination', () => {
  it('terminates the instance of a NodeClaim deleted while booting, then removes the finalizer', async () => {
    sim = await simulation({ kubeletDelays: { registerMs: 120_000 } });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(
      () => nodeClaims(sim!).some((c) => (c.status as { providerID?: string }).providerID),
      60_000,
      'launched',
    );
    const claim = nodeClaims(sim)[0]!;
    const pid = (claim.status as { providerID: string }).providerID;
    await sim.operator.kube.delete('Deployment', 'web', { namespace: 'default' });
    await sim.operator.kube.delete('NodeClaim', claim.metadata.name!);
    await sim.settle();
    const terminating = sim.cluster.api.find('nodeclaims.karpenter.sh', undefined, claim.metadata.name!);
    expect(
      (terminating?.status as { conditions: Array<{ type: string; status: string }> }).conditions.find(
        (c) => c.type === 'InstanceTerminating',
      )?.status,
    ).toBe('True');
    expect((await sim.provider.get(pid)).state).toBe('shutting-down');
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length === 0, 60_000, 'nodeclaim gone');
    await sim.clock.advance(180_000);
    expect(nodes(sim)).toHaveLength(0);
  });

  it('deletes the node first and waits for it', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'running');
    const claim = nodeClaims(sim)[0]!.metadata.name!;
    const node = nodes(sim)[0]!.metadata.name!;
    await sim.operator.kube.delete('NodeClaim', claim);
    await sim.settle();
    expect(sim.cluster.api.get('nodes', undefined, node).metadata.deletionTimestamp).toBeDefined();
    expect(sim.cluster.api.find('nodeclaims.karpenter.sh', undefined, claim)).toBeDefined();
    await sim.clock.advanceUntil(
      () => !sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, claim),
      180_000,
      'nodeclaim gone',
    );
    expect(sim.cluster.api.find('nodes', undefined, node)).toBeUndefined();
  });
});
