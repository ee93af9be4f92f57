// Termination drains through the Eviction API and respects PodDisruptionBudgets (docs/karpenter/disruption.md
// §5.6): a PDB that allows no disruption keeps the node up (FailedDraining, 429s retried) until the PDB
// allows evictions; then the pods move to a replacement node and the node and its instance go.
import { afterEach, describe, expect, it } from 'vitest';
import type { KObject } from '../../sim/apiserver/index.ts';
import {
  deployment,
  events,
  guide,
  nodeClaims,
  nodes,
  pods,
  running,
  simulation,
  taints,
  type Simulation,
} from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const nodeOf = (p: KObject): string | undefined => (p.spec as { nodeName?: string }).nodeName;

describe('draining a node', () => {
  it('waits for a PodDisruptionBudget to allow evictions before the node goes', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 2));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 180_000, 'web running');
    await sim.apply(
      JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace: 'default' },
        spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
      }),
    );
    const [first] = nodes(sim);
    const claim = nodeClaims(sim)[0]!.metadata.name!;

    await sim.operator.kube.delete('NodeClaim', claim);
    await sim.clock.advance(90_000);
    // Still there: cordoned with the disrupted taint, the pods running on it, the evictions refused.
    const old = sim.cluster.api.get('nodes', undefined, first!.metadata.name!);
    expect(old.metadata.deletionTimestamp).toBeDefined();
    expect(taints(old)).toContainEqual({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' });
    expect(
      pods(sim, 'web').filter((p) => nodeOf(p) === first!.metadata.name && !p.metadata.deletionTimestamp),
    ).toHaveLength(2);
    expect(
      events(sim, 'FailedDraining').some((e) =>
        /evicting pod default\/web-.* violates a PDB/.test(String(e['message'])),
      ),
    ).toBe(true);
    expect(await sim.operator.metrics.value('karpenter_pods_eviction_requests_total', { code: '429' })).toBeGreaterThan(
      1,
    );
    // Its pods were re-planned while it drains: a replacement is up before they are evicted.
    expect(nodes(sim).filter((n) => !n.metadata.deletionTimestamp)).toHaveLength(1);

    await sim.cluster.api.patch('poddisruptionbudgets.policy', 'default', 'web', 'merge', {
      spec: { minAvailable: 1 },
    });
    await sim.clock.advanceUntil(
      () => !sim!.cluster.api.find('nodes', undefined, first!.metadata.name!),
      300_000,
      'old node gone',
    );
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 120_000, 'web running again');
    expect(pods(sim, 'web').every((p) => nodeOf(p) !== first!.metadata.name)).toBe(true);
    expect(sim.cluster.api.find('nodeclaims.karpenter.sh', undefined, claim)).toBeUndefined();
    expect(sim.provider.all().find((i) => i.nodeName === first!.metadata.name)?.instance.state).toBe('terminated');
    expect(events(sim, 'Evicted').length).toBeGreaterThanOrEqual(2);
  });
});
