// fast-check arbitraries for random provisioning problems: small enough for the reference solver, varied
// enough to reach every rule (zones, capacity types, architectures, custom labels, taints, limits,
// daemonsets, existing and in-flight nodes, relaxation, host ports, topology spread and (anti-)affinity,
// reserved offerings with small capacities so that NodeClaims contend for them).
import fc from 'fast-check';
import type {
  DaemonSet,
  EngineOptions,
  InstanceType,
  NodePool,
  NodeSelectorRequirement,
  Pod,
  StateNode,
  Taint,
  TopologySpreadConstraint,
} from '../../engine/domain/types.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../../engine/domain/types.ts';
import { withExtraWellKnown } from '../../engine/scheduling/labels.ts';
import type { ProvisionInput } from '../../engine/model/types.ts';
import { daemonSet, nodePool, pod, stateNode } from '../fixtures/builders.ts';
import {
  defaultFakeInstanceTypes,
  FAKE_WELL_KNOWN_LABELS,
  fakeInstanceTypes,
  fakeOffering,
  withOfferings,
} from '../fixtures/instancetypes.ts';

const ZONES = ['test-zone-1', 'test-zone-2', 'test-zone-3'];
const ZONE = 'topology.kubernetes.io/zone';
const CT = 'karpenter.sh/capacity-type';
const ARCH = 'kubernetes.io/arch';
const HOST = 'kubernetes.io/hostname';

const instanceTypeSet = fc
  .constantFrom('defaults', 'sized')
  .map((kind): InstanceType[] => (kind === 'defaults' ? defaultFakeInstanceTypes() : fakeInstanceTypes(10)));

const subset = <T>(xs: T[]) => fc.subarray(xs, { minLength: 1 });

/**
 * Reserved offerings added to a few instance types: ids shared between types at times, capacities of 0 to 2 (so
 * claims contend and run out), now and then unavailable, priced far below the type's other offerings.
 */
const reservationsArb = (its: InstanceType[]) =>
  fc.array(
    fc.record({
      it: fc.integer({ min: 0, max: its.length - 1 }),
      zone: fc.constantFrom(...ZONES),
      id: fc.constantFrom('r-a', 'r-b', 'r-c', 'r-d'),
      capacity: fc.integer({ min: 0, max: 2 }),
      available: fc.oneof({ arbitrary: fc.constant(true), weight: 5 }, { arbitrary: fc.constant(false), weight: 1 }),
    }),
    { maxLength: 4 },
  );

type ReservationSpec = { it: number; zone: string; id: string; capacity: number; available: boolean };

/** The types with the reserved offerings added; `extra` raises every capacity (another NodePool's, newer view). */
function withReservations(its: InstanceType[], rs: readonly ReservationSpec[], extra = 0): InstanceType[] {
  return its.map((it, i) => {
    const mine = rs.filter((r) => r.it === i && !it.offerings.some((o) => o.reservationId === r.id));
    if (!mine.length) return it;
    const base = Math.min(...it.offerings.map((o) => o.price));
    const added = mine.map((r) =>
      fakeOffering({
        zone: r.zone,
        capacityType: 'reserved',
        price: base / 1000,
        available: r.available,
        reservationId: r.id,
        reservationCapacity: r.capacity + extra,
      }),
    );
    return withOfferings(it, [...it.offerings, ...added]);
  });
}
/** Present about one time in four: most pods and pools are plain, a few carry each constraint. */
const rarely = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: a, weight: 1 });
const sometimes = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 1 }, { arbitrary: a, weight: 1 });
const unlikely = fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 });

const poolArb = (i: number) =>
  fc
    .record({
      weight: sometimes(fc.integer({ min: 1, max: 100 })),
      zones: sometimes(subset(ZONES)),
      cts: sometimes(subset(['spot', 'on-demand', 'reserved'])),
      team: fc.constantFrom('none', 'exists', 'exists', 'exists', 'a', 'ab'),
      taint: unlikely,
      cpuLimit: rarely(fc.constantFrom('20', '64')),
      nodesLimit: rarely(fc.constantFrom('3', '6')),
      minValues: unlikely,
    })
    .map((o): NodePool => {
      const requirements: NodeSelectorRequirement[] = [];
      if (o.zones) requirements.push({ key: ZONE, operator: 'In', values: o.zones });
      if (o.cts) requirements.push({ key: CT, operator: 'In', values: o.cts });
      if (o.team === 'exists') requirements.push({ key: 'team', operator: 'Exists', values: [] });
      if (o.team === 'a') requirements.push({ key: 'team', operator: 'In', values: ['a'] });
      if (o.team === 'ab') requirements.push({ key: 'team', operator: 'In', values: ['a', 'b'] });
      if (o.minValues)
        requirements.push({ key: 'node.kubernetes.io/instance-type', operator: 'Exists', values: [], minValues: 2 });
      const taints: Taint[] = o.taint ? [{ key: 'dedicated', value: `p${i}`, effect: 'NoSchedule' }] : [];
      const limits: Record<string, string> = {};
      if (o.cpuLimit) limits['cpu'] = o.cpuLimit;
      if (o.nodesLimit) limits['nodes'] = o.nodesLimit;
      return nodePool({
        name: `pool-${i}`,
        ...(o.weight !== undefined ? { weight: o.weight } : {}),
        requirements,
        taints,
        limits,
      });
    });

const spreadArb = fc.record({
  key: fc.constantFrom(ZONE, HOST, CT),
  maxSkew: fc.integer({ min: 1, max: 2 }),
  when: fc.constantFrom('DoNotSchedule', 'ScheduleAnyway'),
  minDomains: fc.option(fc.constantFrom(2, 3), { nil: undefined }),
});

const deploymentArb = (i: number) =>
  fc
    .record({
      replicas: fc.integer({ min: 1, max: 8 }),
      cpu: fc.constantFrom('100m', '250m', '500m', '1', '1500m', '3'),
      memory: fc.constantFrom('128Mi', '512Mi', '1Gi', '2Gi', '3Gi'),
      zone: rarely(fc.constantFrom(...ZONES)),
      arch: rarely(fc.constantFrom('amd64', 'arm64')),
      team: rarely(fc.constantFrom('a', 'b', 'c')),
      tolerate: sometimes(fc.constantFrom('all', 'p0', 'p1')),
      twoTerms: unlikely,
      preferZone: rarely(fc.constantFrom(...ZONES)),
      hostPort: rarely(fc.constantFrom(80, 8080)),
      spread: rarely(spreadArb),
      anti: fc.constantFrom('none', 'none', 'none', 'none', 'host', 'zone', 'preferred-host'),
      affinity: fc.constantFrom('none', 'none', 'none', 'none', 'self-zone', 'self-host'),
      gpu: unlikely,
    })
    .map((o): Pod[] => {
      const app = `app-${i}`;
      const labels = { app };
      const nodeSelector: Record<string, string> = {};
      if (o.zone) nodeSelector[ZONE] = o.zone;
      if (o.arch) nodeSelector[ARCH] = o.arch;
      if (o.team) nodeSelector['team'] = o.team;
      const tolerations =
        o.tolerate === 'all'
          ? [{ operator: 'Exists' as const }]
          : o.tolerate
            ? [{ key: 'dedicated', operator: 'Equal' as const, value: o.tolerate, effect: 'NoSchedule' as const }]
            : [];
      const required = o.twoTerms
        ? [
            [{ key: ZONE, operator: 'In' as const, values: ['no-such-zone'] }],
            [{ key: ZONE, operator: 'In' as const, values: ['test-zone-2', 'test-zone-3'] }],
          ]
        : undefined;
      const preferred = o.preferZone
        ? [{ weight: 10, expressions: [{ key: ZONE, operator: 'In' as const, values: [o.preferZone] }] }]
        : undefined;
      const spread: TopologySpreadConstraint[] = o.spread
        ? [
            {
              maxSkew: o.spread.maxSkew,
              topologyKey: o.spread.key,
              whenUnsatisfiable: o.spread.when as 'DoNotSchedule',
              labelSelector: { matchLabels: labels },
              ...(o.spread.minDomains ? { minDomains: o.spread.minDomains } : {}),
            },
          ]
        : [];
      const term = (key: string) => ({ labelSelector: { matchLabels: labels }, topologyKey: key });
      const affinity = {
        ...(o.anti === 'host' ? { podAntiAffinity: { required: [term(HOST)] } } : {}),
        ...(o.anti === 'zone' ? { podAntiAffinity: { required: [term(ZONE)] } } : {}),
        ...(o.anti === 'preferred-host'
          ? { podAntiAffinity: { preferred: [{ weight: 5, podAffinityTerm: term(HOST) }] } }
          : {}),
        ...(o.affinity === 'self-zone' ? { podAffinity: { required: [term(ZONE)] } } : {}),
        ...(o.affinity === 'self-host' ? { podAffinity: { required: [term(HOST)] } } : {}),
      };
      return Array.from({ length: o.replicas }, (_, r) =>
        pod({
          name: `${app}-${r}`,
          cpu: o.cpu,
          memory: o.memory,
          labels,
          nodeSelector,
          tolerations,
          ...(required ? { required } : {}),
          ...(preferred ? { preferred } : {}),
          ...(Object.keys(affinity).length ? { affinity } : {}),
          spread,
          ...(o.hostPort ? { hostPorts: [o.hostPort] } : {}),
          ...(o.gpu ? { resources: { 'fake.com/vendor-a': '1' } } : {}),
          createdAt: i * 100 + r,
        }),
      );
    });

function existingArb(its: InstanceType[]) {
  return fc
    .array(
      fc.record({
        it: fc.integer({ min: 0, max: its.length - 1 }),
        zone: fc.constantFrom(...ZONES),
        pool: fc.constantFrom('pool-0', 'pool-1'),
        initialized: fc.boolean(),
        used: fc.constantFrom('0', '500m', '1'),
        taint: fc.boolean(),
      }),
      { maxLength: 4 },
    )
    .map((rs): StateNode[] =>
      rs.map((r, i) => {
        const it = its[r.it]!;
        return stateNode({
          name: `node-${i}`,
          instanceType: it,
          zone: r.zone,
          nodePool: r.pool,
          capacityType: 'on-demand',
          initialized: r.initialized,
          ...(r.taint ? { taints: [{ key: 'dedicated', value: 'p0', effect: 'NoSchedule' as const }] } : {}),
          pods:
            r.used === '0'
              ? []
              : [
                  pod({
                    name: `bound-${i}`,
                    cpu: r.used,
                    memory: '256Mi',
                    nodeName: `node-${i}`,
                    labels: { app: 'app-0' },
                  }),
                ],
        });
      }),
    );
}

const daemonArb = fc
  .array(fc.record({ cpu: fc.constantFrom('100m', '200m'), tolerateAll: fc.boolean(), port: unlikely }), {
    maxLength: 2,
  })
  .map((ds): DaemonSet[] =>
    ds.map((d, i) =>
      daemonSet(`ds-${i}`, {
        cpu: d.cpu,
        memory: '64Mi',
        ...(d.tolerateAll ? { tolerations: [{ operator: 'Exists' }] } : {}),
        ...(d.port ? { hostPorts: [8080] } : {}),
      }),
    ),
  );

const optionsArb = fc
  .record({
    preferencePolicy: fc.constantFrom('Respect', 'Ignore'),
    minValuesPolicy: fc.constantFrom('Strict', 'BestEffort'),
  })
  .map(
    (o): EngineOptions => ({
      ...DEFAULT_ENGINE_OPTIONS,
      preferencePolicy: o.preferencePolicy as 'Respect',
      minValuesPolicy: o.minValuesPolicy as 'Strict',
      maxInstanceTypes: 60,
    }),
  );

export const problemArb: fc.Arbitrary<ProvisionInput> = instanceTypeSet.chain((its) =>
  fc
    .record({
      pools: fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => poolArb(i)))),
      deployments: fc
        .integer({ min: 1, max: 5 })
        .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => deploymentArb(i)))),
      nodes: existingArb(its),
      daemonSets: daemonArb,
      options: optionsArb,
      reservations: sometimes(reservationsArb(its)),
      laterPoolsSeeMore: fc.boolean(),
      fallback: unlikely,
    })
    .map((o): ProvisionInput => {
      const mine = o.reservations?.length ? withReservations(its, o.reservations) : its;
      const more = o.reservations?.length && o.laterPoolsSeeMore ? withReservations(its, o.reservations, 1) : mine;
      return {
        nodePools: o.pools,
        instanceTypes: new Map(o.pools.map((p, i) => [p.name, i === 0 ? mine : more])),
        nodes: o.nodes,
        pods: o.deployments.flat(),
        daemonSets: o.daemonSets,
        options: o.options,
        wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS),
        ...(o.fallback ? { reservedOfferingMode: 'Fallback' as const } : {}),
      };
    }),
);

/**
 * Plain workloads (no topology, ports or volumes: what the improvement phase may re-pack) on the real EC2
 * catalog, under a NodePool restricted at random by category, architecture and capacity type.
 */
export function plainProblemArb(its: readonly InstanceType[]): fc.Arbitrary<ProvisionInput> {
  return fc
    .record({
      categories: fc.subarray(['c', 'm', 'r', 't'], { minLength: 1 }),
      arch: fc.constantFrom(['amd64'], ['arm64'], ['amd64', 'arm64']),
      cts: fc.constantFrom(['on-demand'], ['spot'], ['spot', 'on-demand']),
      deployments: fc.array(
        fc.record({
          n: fc.integer({ min: 1, max: 25 }),
          cpu: fc.constantFrom('100m', '250m', '500m', '1', '2', '3500m'),
          memory: fc.constantFrom('128Mi', '512Mi', '1Gi', '3Gi', '8Gi', '14Gi'),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    })
    .map((o): ProvisionInput => {
      const pool = nodePool({
        requirements: [
          { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: o.categories },
          { key: 'kubernetes.io/arch', operator: 'In', values: o.arch },
          { key: CT, operator: 'In', values: o.cts },
        ],
      });
      return {
        nodePools: [pool],
        instanceTypes: new Map([[pool.name, its]]),
        nodes: [],
        pods: o.deployments.flatMap((d, i) =>
          Array.from({ length: d.n }, (_, r) =>
            pod({ name: `d${i}-${r}`, cpu: d.cpu, memory: d.memory, createdAt: i * 100 + r }),
          ),
        ),
        daemonSets: [],
        options: { ...DEFAULT_ENGINE_OPTIONS, maxInstanceTypes: 60 },
      };
    });
}

/**
 * NodePool `pool-<i>` of a random weight over instance categories and capacity types on the real catalog: the
 * multi-pool problems the verifier's weight-order and limit checks run on. `limits` draws the pool's limits (or
 * none); `budgets` gives it a disruption budget of every node.
 */
export function weightedPoolArb(
  i: number,
  o: {
    readonly categories: fc.Arbitrary<string[]>;
    readonly limits: fc.Arbitrary<Record<string, string> | undefined>;
    readonly budgets?: boolean;
  },
): fc.Arbitrary<NodePool> {
  return fc
    .record({
      weight: fc.integer({ min: 1, max: 100 }),
      categories: o.categories,
      cts: fc.constantFrom(['on-demand'], ['spot'], ['spot', 'on-demand']),
      limits: o.limits,
    })
    .map((r) =>
      nodePool({
        name: `pool-${i}`,
        weight: r.weight,
        requirements: [
          { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: r.categories },
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: r.cts },
        ],
        ...(r.limits ? { limits: r.limits } : {}),
        ...(o.budgets ? { budgets: [{ nodes: '100%' }] } : {}),
      }),
    );
}
