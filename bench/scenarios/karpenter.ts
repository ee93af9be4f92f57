// Karpenter's own scheduling benchmark workload (docs/karpenter/scheduling.md §5): 400 fake instance types, a
// NodePool with huge limits, the "diverse" pod mix and the 4,000 "preference" pods, generated with a seeded
// PRNG in the same draw order (labels, selector value, CPU, memory). Go's math/rand stream cannot be
// reproduced in JavaScript; §5.5 explains why any seeded PRNG with the same distributions is equivalent.
import {
  DEFAULT_ENGINE_OPTIONS,
  withExtraWellKnown,
  type InstanceType,
  type NodePool,
  type Pod,
  type ProvisionInput,
} from '../../engine/index.ts';
import { nodePool, pod } from '../../test/fixtures/builders.ts';
import { FAKE_WELL_KNOWN_LABELS, fakeBenchmarkInstanceTypes } from '../../test/fixtures/instancetypes.ts';
import { mulberry32, pick, type Rng } from './random.ts';

const CPUS = ['100m', '250m', '500m', '1000m', '1500m'];
const MEMS = ['100Mi', '256Mi', '512Mi', '1024Mi', '2048Mi', '4096Mi'];
const LABEL_VALUES = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

export function karpenterInstanceTypes(): InstanceType[] {
  return fakeBenchmarkInstanceTypes(400);
}

/**
 * §5.3: limits that never bind, the test default label, no requirements. Karpenter's benchmark says 10000000Gi
 * of memory, which is more bytes than a double holds exactly (resources.ts refuses it); 8000Ti binds no more.
 */
export function karpenterNodePool(): NodePool {
  return nodePool({
    name: 'default',
    labels: { 'testing/cluster': 'unspecified' },
    limits: { cpu: '10000000', memory: '8000Ti' },
  });
}

class Gen {
  private n = 0;
  constructor(private readonly rng: Rng) {}
  next(o: Parameters<typeof pod>[0]): Pod {
    const i = this.n++;
    return pod({
      ...o,
      name: `p-${i}`,
      uid: `uid-${String(i).padStart(6, '0')}`,
      labels: { 'testing/cluster': 'unspecified', ...(o?.labels ?? {}) },
      createdAt: i,
    });
  }
  label(): string {
    return pick(this.rng, LABEL_VALUES);
  }
  resources(): { cpu: string; memory: string } {
    const cpu = pick(this.rng, CPUS);
    return { cpu, memory: pick(this.rng, MEMS) };
  }
}

/** §5.4 makeDiversePods: five equal groups (generic, zone spread, hostname spread, zone self-affinity, hostname anti-affinity) plus generic remainder. */
export function diversePods(count: number, seed = 42): Pod[] {
  const g = new Gen(mulberry32(seed));
  const q = Math.floor(count / 5);
  const out: Pod[] = [];
  for (let i = 0; i < q; i++) out.push(g.next({ labels: { 'my-label': g.label() }, ...g.resources() }));
  for (const key of [ZONE, HOST]) {
    for (let i = 0; i < q; i++) {
      const labels = { 'my-label': g.label() };
      const selector = g.label();
      out.push(
        g.next({
          labels,
          spread: [
            {
              maxSkew: 1,
              topologyKey: key,
              whenUnsatisfiable: 'DoNotSchedule',
              labelSelector: { matchLabels: { 'my-label': selector } },
            },
          ],
          ...g.resources(),
        }),
      );
    }
  }
  for (let i = 0; i < q; i++) {
    const labels = { 'my-affininity': g.label() };
    out.push(
      g.next({
        labels,
        affinity: { podAffinity: { required: [{ labelSelector: { matchLabels: labels }, topologyKey: ZONE }] } },
        ...g.resources(),
      }),
    );
  }
  for (let i = 0; i < q; i++) {
    out.push(
      g.next({
        labels: { app: 'nginx' },
        affinity: {
          podAntiAffinity: { required: [{ labelSelector: { matchLabels: { app: 'nginx' } }, topologyKey: HOST }] },
        },
        ...g.resources(),
      }),
    );
  }
  for (let i = 5 * q; i < count; i++) out.push(g.next({ labels: { 'my-label': g.label() }, ...g.resources() }));
  return out;
}

/** §5.4 makePreferencePods: one (cpu, memory) pair for all; a preferred zone and two preferred anti-affinities. */
export function preferencePods(count = 4000, seed = 42): { pods: Pod[]; cpu: string; memory: string } {
  const g = new Gen(mulberry32(seed));
  const { cpu, memory } = g.resources();
  const selector = { matchLabels: { app: 'nginx' } };
  const pods: Pod[] = [];
  for (let i = 0; i < count; i++) {
    pods.push(
      g.next({
        cpu,
        memory,
        labels: { app: 'nginx' },
        preferred: [{ weight: 1, expressions: [{ key: ZONE, operator: 'In', values: ['test-zone-1'] }] }],
        affinity: {
          podAntiAffinity: {
            preferred: [
              { weight: 10, podAffinityTerm: { labelSelector: selector, topologyKey: ZONE } },
              { weight: 1, podAffinityTerm: { labelSelector: selector, topologyKey: HOST } },
            ],
          },
        },
      }),
    );
  }
  return { pods, cpu, memory };
}

/** The benchmark's provisioning input for `pods`: its NodePool and 400 types, nothing running, the fake labels. */
export function karpenterInput(pods: readonly Pod[]): ProvisionInput {
  const pool = karpenterNodePool();
  return {
    nodePools: [pool],
    instanceTypes: new Map([[pool.name, karpenterInstanceTypes()]]),
    nodes: [],
    daemonSets: [],
    options: DEFAULT_ENGINE_OPTIONS,
    wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS),
    pods,
  };
}
