// Named scenarios for the quality benchmark: realistic workload shapes on the real catalog (ap-northeast-2),
// each with the NodePools the guide shows, seeded.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_ENGINE_OPTIONS,
  parseText,
  type DaemonSet,
  type NodePool,
  type Pod,
  type ProvisionInput,
} from '../../engine/index.ts';
import { daemonSet, nodePool, pod } from '../../test/fixtures/builders.ts';
import { catalog, genericPods, guideDefaultNodePool } from './generic.ts';
import { mulberry32, pick } from './random.ts';

function guidePools(file: string): NodePool[] {
  const path = fileURLToPath(new URL(`../../examples/guide/${file}`, import.meta.url));
  const out: NodePool[] = [];
  for (const e of parseText(readFileSync(path, 'utf8'), { assumeReady: true }))
    if (e.result.ok && e.result.value.kind === 'NodePool') out.push(e.result.value.value);
  return out;
}

function input(pools: NodePool[], pods: Pod[], daemonSets: DaemonSet[] = []): ProvisionInput {
  return {
    nodePools: pools,
    instanceTypes: new Map(pools.map((p) => [p.name, catalog()])),
    nodes: [],
    pods,
    daemonSets,
    options: DEFAULT_ENGINE_OPTIONS,
  };
}

function shaped(
  n: number,
  cpu: string[],
  memory: string[],
  seed: number,
  extra: Partial<Parameters<typeof pod>[0]> = {},
  prefix = 'p',
): Pod[] {
  const rng = mulberry32(seed);
  return Array.from({ length: n }, (_, i) =>
    pod({
      name: `${prefix}-${i}`,
      uid: `uid-${prefix}-${i}`,
      cpu: pick(rng, cpu),
      memory: pick(rng, memory),
      createdAt: i,
      ...extra,
    }),
  );
}

interface QualityScenario {
  readonly name: string;
  readonly generic: boolean;
  readonly build: () => ProvisionInput;
  readonly quick: boolean;
}

export const QUALITY_SCENARIOS: readonly QualityScenario[] = [
  {
    name: 'generic-1k',
    generic: true,
    quick: true,
    build: () => input([guideDefaultNodePool()], genericPods(1000, 1)),
  },
  {
    name: 'generic-10k',
    generic: true,
    quick: true,
    build: () => input([guideDefaultNodePool()], genericPods(10000, 2)),
  },
  {
    name: 'generic-50k',
    generic: true,
    quick: false,
    build: () => input([guideDefaultNodePool()], genericPods(50000, 3)),
  },
  {
    name: 'cpu-heavy',
    generic: false,
    quick: true,
    build: () => input([guideDefaultNodePool()], shaped(2000, ['2', '4'], ['1Gi', '2Gi'], 4)),
  },
  {
    name: 'memory-heavy',
    generic: false,
    quick: true,
    build: () => input([guideDefaultNodePool()], shaped(2000, ['250m', '500m'], ['8Gi', '16Gi'], 5)),
  },
  {
    name: 'gpu',
    generic: false,
    quick: true,
    build: () =>
      input(
        [
          nodePool({
            name: 'gpu',
            requirements: [{ key: 'karpenter.k8s.aws/instance-gpu-manufacturer', operator: 'In', values: ['nvidia'] }],
          }),
        ],
        shaped(60, ['4', '8'], ['16Gi', '32Gi'], 6, { resources: { 'nvidia.com/gpu': '1' } }),
      ),
  },
  {
    name: 'mixed-arch',
    generic: false,
    quick: true,
    build: () =>
      input(
        [guideDefaultNodePool()],
        [
          ...shaped(1500, ['500m', '1'], ['1Gi', '2Gi'], 7, { nodeSelector: { 'kubernetes.io/arch': 'arm64' } }, 'arm'),
          ...shaped(1500, ['500m', '1'], ['1Gi', '2Gi'], 8, { nodeSelector: { 'kubernetes.io/arch': 'amd64' } }, 'amd'),
        ],
      ),
  },
  {
    name: 'daemonsets',
    generic: false,
    quick: true,
    build: () =>
      input([guideDefaultNodePool()], genericPods(5000, 9), [
        daemonSet('node-exporter', { cpu: '100m', memory: '128Mi' }),
        daemonSet('fluent-bit', { cpu: '200m', memory: '256Mi' }),
        daemonSet('kube-proxy', { cpu: '100m', memory: '64Mi' }),
      ]),
  },
  {
    name: 'weighted-pools-limits',
    generic: false,
    quick: true,
    build: () => input(guidePools('guide-06.yaml'), genericPods(3000, 10)),
  },
  {
    name: 'spot-and-on-demand',
    generic: false,
    quick: true,
    build: () =>
      input(
        [guideDefaultNodePool()],
        [
          ...shaped(
            1500,
            ['250m', '1'],
            ['512Mi', '2Gi'],
            11,
            { nodeSelector: { 'karpenter.sh/capacity-type': 'on-demand' } },
            'od',
          ),
          ...shaped(1500, ['250m', '1'], ['512Mi', '2Gi'], 12, {}, 'any'),
        ],
      ),
  },
  {
    // Pods of 64-192 vCPU and 256 GiB-1 TiB (machine-learning jobs, in-memory databases), spot and on-demand allowed.
    name: 'large-pods',
    generic: false,
    quick: true,
    build: () =>
      input([guideDefaultNodePool()], shaped(60, ['64', '96', '128', '192'], ['256Gi', '512Gi', '768Gi', '1Ti'], 16)),
  },
  {
    // A weight-50 general pool (c/m/r) and a weight-10 GPU pool (g/p); GPU jobs and a generic CPU workload.
    name: 'gpu-and-cpu-pools',
    generic: false,
    quick: true,
    build: () =>
      input(
        [
          nodePool({
            name: 'general',
            weight: 50,
            requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] }],
          }),
          nodePool({
            name: 'gpu',
            weight: 10,
            requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['g', 'p'] }],
          }),
        ],
        [
          ...shaped(60, ['4', '8'], ['16Gi', '32Gi'], 17, { resources: { 'nvidia.com/gpu': '1' } }, 'gpu'),
          ...genericPods(2000, 18),
        ],
      ),
  },
  // The guide's default NodePool as written, limits cpu 1000 and memory 1000Gi included.
  {
    name: 'limits',
    generic: false,
    quick: true,
    build: () => input(guidePools('guide-01.yaml'), genericPods(600, 19)),
  },
  {
    name: 'small-and-large',
    generic: false,
    quick: true,
    build: () =>
      input(
        [guideDefaultNodePool()],
        [
          ...shaped(3000, ['100m'], ['128Mi', '256Mi'], 13, {}, 'small'),
          ...shaped(100, ['16'], ['64Gi'], 14, {}, 'large'),
        ],
      ),
  },
];
