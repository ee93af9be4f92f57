// The simulated API server admits Karpenter's kinds as a real one with the CRDs would: invalid objects
// are refused with 422, naming the field, whether they come from client-node or kubectl-style patches.
import { afterEach, describe, expect, it } from 'vitest';
import { KubeError } from '../../controller/operator/kube.ts';
import { guide, nodeClaims, simulation, type Simulation } from '../support/environment.ts';
import { parseDocuments } from '../../engine/index.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const refusal = async (p: Promise<unknown>): Promise<KubeError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KubeError);
  return err as KubeError;
};

describe('admission of Karpenter objects', () => {
  it("refuses the guide's NodePool fragment without nodeClassRef (guide-04), naming the field", async () => {
    sim = await simulation({ only: [] });
    const err = await refusal(sim.apply(guide('guide-04.yaml')));
    expect(err.code).toBe(422);
    expect(err.message).toContain('spec.template.spec.nodeClassRef');
    expect(sim.cluster.store.list('nodepools.karpenter.sh')).toHaveLength(0);
  });

  it('refuses a NodePool weight out of range and a bad consolidateAfter in one answer', async () => {
    sim = await simulation({ only: [] });
    const pool = parseDocuments(guide('guide-01.yaml'))[0]!.value as {
      spec: { weight: number; disruption: { consolidateAfter: string } };
    };
    pool.spec.weight = 500;
    pool.spec.disruption.consolidateAfter = 'soon';
    const err = await refusal(sim.operator.kube.create('NodePool', pool as never));
    expect(err.code).toBe(422);
    expect(err.message).toContain('spec.weight');
    expect(err.message).toContain('spec.disruption.consolidateAfter');
  });

  it('stores CRD defaults on admitted objects', async () => {
    sim = await simulation({ only: [] });
    await sim.apply(guide('guide-05.yaml'));
    const pool = sim.cluster.api.get('nodepools.karpenter.sh', undefined, 'spot-diverse');
    expect(pool.spec).toMatchObject({
      disruption: {
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
        consolidateAfter: '0s',
        budgets: [{ nodes: '10%' }],
      },
      template: { spec: { expireAfter: '720h' } },
    });
  });

  it("refuses a change to a NodeClaim's spec, which is immutable", async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'one', namespace: 'default' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'one' } },
          template: {
            metadata: { labels: { app: 'one' } },
            spec: { containers: [{ name: 'c', image: 'pause', resources: { requests: { cpu: '1' } } }] },
          },
        },
      }),
    );
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length === 1, 60_000, 'a nodeclaim');
    const name = nodeClaims(sim)[0]!.metadata.name!;
    const err = await refusal(
      sim.operator.kube.patch('NodeClaim', name, { spec: { taints: [{ key: 'x', effect: 'NoSchedule' }] } }),
    );
    expect(err.code).toBe(422);
    expect(err.message).toMatch(/spec.*immutable/);
  });
});
