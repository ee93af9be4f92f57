// A pod whose topology spread failed on an in-flight NodeClaim can join it once another pod has narrowed it.
// Karpenter checks every in-flight NodeClaim afresh on each attempt (scheduler.go addToInflightNode), and the
// spread picks the lowest-count domain among the NodeClaim's allowed ones (topologygroup.go
// nextDomainTopologySpread) before the instance types are filtered (nodeclaim.go CanAdd): on a NodeClaim that
// allows every capacity type the pick can be one its types do not offer there, and once another pod has narrowed
// it to on-demand the pick is on-demand and fits. Both solvers must place the pod (the equivalence property test
// found the wasm solver skipping the narrowed NodeClaim as still failed).
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_OPTIONS, type InstanceType } from '../../engine/domain/types.ts';
import type { ProvisionInput, ProvisionPlan } from '../../engine/model/types.ts';
import { solveReference } from '../../engine/solver/reference/scheduler.ts';
import { WasmSolver } from '../../engine/solver/wasm.ts';
import { nodePool, pod, stateNode } from '../fixtures/builders.ts';
import { defaultFakeInstanceTypes, fakeOffering, withOfferings } from '../fixtures/instancetypes.ts';
import { normalizePlan } from './normalize.ts';

const CT = 'karpenter.sh/capacity-type';
const ZONE = 'topology.kubernetes.io/zone';

/** The test catalog, its arm type with an exhausted reservation in test-zone-1. */
function catalog(): InstanceType[] {
  return defaultFakeInstanceTypes().map((it) =>
    it.name === 'arm-instance-type'
      ? withOfferings(it, [
          ...it.offerings,
          fakeOffering({
            zone: 'test-zone-1',
            capacityType: 'reserved',
            price: 0.015,
            reservationId: 'r-a',
            reservationCapacity: 0,
          }),
        ])
      : it,
  );
}

const spread = (app: string, maxSkew: number) => ({
  labels: { app },
  spread: [
    {
      maxSkew,
      topologyKey: CT,
      whenUnsatisfiable: 'DoNotSchedule' as const,
      labelSelector: { matchLabels: { app } },
    },
  ],
});

/**
 * Queue order (memory, largest first): `wide` (spread over capacity type, maxSkew 2, one of its kind already on an
 * on-demand node it cannot use), `arm` (arm64, its own spread), `opener` (team a in test-zone-3).
 * 1. `wide` and `arm` fit the weight-1 `reserved` pool, whose only reservation is exhausted: they wait (Strict).
 * 2. `opener` opens a `team` NodeClaim in test-zone-3 allowing every capacity type.
 * 3. `wide` on it: spot and reserved tie at count 1 (on-demand has 2), the tie goes to `reserved`, which no type
 *    offers in test-zone-3: it fails there, then waits on the `reserved` pool again.
 * 4. `arm` on it: every count ties at 1, the tie goes to `on-demand`: it joins and narrows the NodeClaim.
 * 5. `wide` on the narrowed NodeClaim: on-demand is its only domain, 2 - 0 <= maxSkew: it joins.
 */
function problem(): ProvisionInput {
  const its = catalog();
  const pools = [
    nodePool({ name: 'reserved', weight: 1, requirements: [{ key: CT, operator: 'In', values: ['reserved'] }] }),
    nodePool({
      name: 'team',
      requirements: [
        { key: ZONE, operator: 'In', values: ['test-zone-3'] },
        { key: 'team', operator: 'Exists', values: [] },
      ],
    }),
  ];
  const node = stateNode({
    name: 'node-0',
    nodePool: 'reserved',
    instanceType: its[0]!,
    zone: 'test-zone-1',
    capacityType: 'on-demand',
    taints: [{ key: 'dedicated', value: 'p0', effect: 'NoSchedule' }],
    pods: [
      pod({
        name: 'wide-bound',
        cpu: '1',
        memory: '256Mi',
        ...spread('wide', 2),
        nodeName: 'node-0',
        phase: 'Running',
      }),
    ],
  });
  return {
    nodePools: pools,
    instanceTypes: new Map(pools.map((p) => [p.name, its])),
    nodes: [node],
    pods: [
      pod({ name: 'wide', cpu: '100m', memory: '1Gi', createdAt: 0, ...spread('wide', 2) }),
      pod({
        name: 'opener',
        cpu: '100m',
        memory: '128Mi',
        createdAt: 1,
        nodeSelector: { [ZONE]: 'test-zone-3', team: 'a' },
      }),
      pod({
        name: 'arm',
        cpu: '100m',
        memory: '512Mi',
        createdAt: 2,
        nodeSelector: { 'kubernetes.io/arch': 'arm64' },
        ...spread('arm', 1),
      }),
    ],
    daemonSets: [],
    options: DEFAULT_ENGINE_OPTIONS,
  };
}

/** Where each pod went and the NodeClaims' capacity types. */
function shape(p: ProvisionPlan) {
  const n = normalizePlan(p);
  return {
    claims: n.claims.map((c) => ({
      nodePool: c.nodePool,
      pods: c.pods,
      capacityType: c.requirements.filter((r) => r.startsWith(`${CT} `)),
    })),
    unschedulable: n.unschedulable,
  };
}

describe('topology spread on an in-flight NodeClaim another pod narrowed', () => {
  const input = problem();
  const uid = (name: string) => input.pods.find((p) => p.name === name)!.uid;
  const expected = {
    claims: [
      { nodePool: 'team', pods: [uid('arm'), uid('opener'), uid('wide')].sort(), capacityType: [`${CT} In on-demand`] },
    ],
    unschedulable: [],
  };

  it('the reference solver places the pod there', () => {
    expect(shape(solveReference(input))).toEqual(expected);
  });

  it.each(['release', 'debug'] as const)('the wasm solver (%s, no improvement phase) makes the same plan', (build) => {
    const plan = new WasmSolver({ build, improve: false }).solve(input);
    expect(shape(plan)).toEqual(expected);
    expect(normalizePlan(plan)).toEqual(normalizePlan(solveReference(input)));
  });
});
