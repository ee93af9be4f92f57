// The invariant checker catches what it promises to catch: a PDB broken on a disrupted node, a disruption
// started beyond its NodePool's budget, and a pod left without a node too long.
import { afterEach, describe, expect, it } from 'vitest';
import { allowedByBudgets, watchInvariants } from './invariants.ts';
import { deployment, guide, nodeClaims, nodes, pods, running, simulation, type Simulation } from './environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const at = (h: number) => Date.UTC(2025, 0, 1, h);

describe('allowedByBudgets', () => {
  it('takes the smallest active budget for the reason, rounds percentages up, and fails closed', () => {
    expect(allowedByBudgets([{ nodes: '10%' }], 'Drifted', 3, at(12))).toBe(1);
    expect(allowedByBudgets([{ nodes: '50%' }, { nodes: '0', reasons: ['Empty'] }], 'Drifted', 3, at(12))).toBe(2);
    expect(
      allowedByBudgets([{ nodes: '5' }, { nodes: '0', schedule: '0 2 * * *', duration: 3_600_000 }], 'Empty', 3, at(2)),
    ).toBe(0);
    expect(
      allowedByBudgets([{ nodes: '5' }, { nodes: '0', schedule: '0 2 * * *', duration: 3_600_000 }], 'Empty', 3, at(4)),
    ).toBe(5);
    expect(allowedByBudgets([{ nodes: 'ten' }], 'Empty', 3, at(4))).toBe(0);
    expect(allowedByBudgets([], 'Empty', 3, at(4))).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('watchInvariants', () => {
  it('reports a PDB-protected pod deleted from a disrupted node, a disruption over budget, and a pod unbound too long', async () => {
    sim = await simulation({
      only: ['nodeclass.status', 'nodepool.hash', 'nodepool.readiness', 'provisioner', 'nodeclaim.lifecycle'],
    });
    await sim.apply(guide('guide-07.yaml').replace("- nodes: '10%'", "- nodes: '0'"));
    await sim.apply(deployment('web', 2, { cpu: '100m', memory: '128Mi' }));
    await sim.apply(
      JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace: 'default' },
        spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
      }),
    );
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 180_000, 'web running');
    const inv = watchInvariants(sim, { maxUnboundMs: 60_000 });

    // Nothing wrong yet.
    expect(inv.violations()).toEqual([]);

    // A budget of 0 and a NodeClaim marked disrupted anyway.
    const claim = nodeClaims(sim)[0]!;
    const conditions = [
      ...(claim.status as { conditions: object[] }).conditions,
      {
        type: 'DisruptionReason',
        status: 'True',
        reason: 'Underutilized',
        lastTransitionTime: new Date(sim.clock.now()).toISOString(),
      },
    ];
    sim.cluster.api.patchStatus('nodeclaims.karpenter.sh', undefined, claim.metadata.name!, { conditions });

    // The node tainted as disrupted, and a protected pod deleted from it directly (no eviction).
    const node = nodes(sim)[0]!;
    sim.cluster.api.patch('nodes', undefined, node.metadata.name!, 'merge', {
      spec: { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] },
    });
    sim.cluster.api.delete('pods', 'default', pods(sim, 'web')[0]!.metadata.name!);

    // A pod nothing can place.
    await sim.apply(deployment('nowhere', 1, { nodeSelector: { 'no-such-label': 'x' } }));
    await sim.clock.advance(90_000);

    const kinds = inv.violations().map((v) => v.kind);
    expect(kinds).toEqual(expect.arrayContaining(['budget', 'pdb', 'unbound']));
    expect(inv.violations().find((v) => v.kind === 'budget')!.message).toMatch(/allow 0/);
    expect(inv.violations().find((v) => v.kind === 'pdb')!.message).toMatch(
      /PodDisruptionBudget default\/web had 1 healthy of 2 desired/,
    );
    expect(inv.violations().find((v) => v.kind === 'unbound')!.message).toMatch(/pod default\/nowhere-/);
    expect(inv.disruptions()).toMatchObject([{ nodeClaim: claim.metadata.name, reason: 'Underutilized', allowed: 0 }]);
    inv.stop();
  });

  it('reports a disruption started on a NodeClaim whose NodePool is gone, naming the claim and the pool', async () => {
    sim = await simulation({
      only: ['nodeclass.status', 'nodepool.hash', 'nodepool.readiness', 'provisioner', 'nodeclaim.lifecycle'],
    });
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 1, { cpu: '100m', memory: '128Mi' }));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'web running');
    const inv = watchInvariants(sim);

    // The claim now names a NodePool that does not exist (as while its NodePool is being deleted), and starts a
    // voluntary disruption: there is no budget that could allow it.
    const claim = nodeClaims(sim)[0]!;
    sim.cluster.api.patch('nodeclaims.karpenter.sh', undefined, claim.metadata.name!, 'merge', {
      metadata: { labels: { 'karpenter.sh/nodepool': 'gone' } },
    });
    const conditions = [
      ...(nodeClaims(sim)[0]!.status as { conditions: object[] }).conditions,
      {
        type: 'DisruptionReason',
        status: 'True',
        reason: 'Drifted',
        lastTransitionTime: new Date(sim.clock.now()).toISOString(),
      },
    ];
    sim.cluster.api.patchStatus('nodeclaims.karpenter.sh', undefined, claim.metadata.name!, { conditions });

    expect(inv.violations()).toEqual([
      expect.objectContaining({
        kind: 'budget',
        message: `nodeclaim ${claim.metadata.name} started a Drifted disruption, but its nodepool gone does not exist: no budget allows it`,
      }),
    ]);
    expect(inv.disruptions()).toMatchObject([{ nodeClaim: claim.metadata.name, nodePool: 'gone', allowed: 0 }]);
    inv.stop();
  });
});
