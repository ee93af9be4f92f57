// Named scenarios for the quality benchmark: realistic workload shapes on the real catalog (ap-northeast-2),
// each with the NodePools the guide shows, seeded.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_ENGINE_OPTIONS, parseText, type DaemonSet, type NodePool, type Pod, type ProvisionInput } from '../../engine/index.ts';
import { daemonSet, nodePool, pod } from '../../test/fixtures/builders.ts';
import { catalog, genericPods, guideDefaultNodePool } from './generic.ts';
import { mulberry32, pick } from './random.ts';

function guidePools(file: string): NodePool[] {
  const path = fileURLToPath(new URL(`../../examples/guide/${file}`, import.meta.url));
  const out: NodePool[] = [];
  for (const e of parseText(readFileSync(path, 'utf8'), { assumeReady: true })) if (e.result.ok && e.result.value.kind === 'NodePool') out.push(e.result.value.value);
  return out;
}

function input(pools: NodePool[], pods: Pod[], daemonSets: DaemonSet[] = []): ProvisionInput {
  return { nodePools: pools, instanceTypes: new Map(pools.map((p) => [p.name, catalog()])), nodes: [], pods, daemonSets, options: DEFAULT_ENGINE_OPTIONS };
}

function shaped(n: number, cpu: string[], memory: string[], seed: number, extra: Partial<Parameters<typeof pod>[0]> = {}, prefix = 'p'): Pod[] {
  const rng = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => pod({ name: `${prefix}-${i}`, uid: `uid-${prefix}-${i}`, cpu: pick(rng, cpu), memory: pick(rng, memory), createdAt: i, ...extra }));
}

export interface QualityScenario {
  readonly name: string;
  readonly generic: boolean;
  readonly build: () => ProvisionInput;
  readonly quick: boolean;
}

export const QUALITY_SCENARIOS: readonly QualityScenario[] = [
  { name: 'generic-1k', generic: true, quick: true, build: () => input([guideDefaultNodePool()], genericPods(1000, 1)) },
  { name: 'generic-10k', generic: true, quick: true, build: () => input([guideDefaultNodePool()], genericPods(10000, 2)) },
  { name: 'generic-50k', generic: true, quick: false, build: () => input([guideDefaultNodePool()], genericPods(50000, 3)) },
  { name: 'cpu-heavy', generic: false, quick: true, build: () => input([guideDefaultNodePool()], shaped(2000, ['2', '4'], ['1Gi', '2Gi'], 4)) },
  { name: 'memory-heavy', generic: false, quick: true, build: () => input([guideDefaultNodePool()], shaped(2000, ['250m', '500m'], ['8Gi', '16Gi'], 5)) },
  {
    name: 'gpu', generic: false, quick: true,
    build: () => input(
      [nodePool({ name: 'gpu', requirements: [{ key: 'karpenter.k8s.aws/instance-gpu-manufacturer', operator: 'In', values: ['nvidia'] }] })],
      shaped(60, ['4', '8'], ['16Gi', '32Gi'], 6, { resources: { 'nvidia.com/gpu': '1' } }),
    ),
  },
  {
    name: 'mixed-arch', generic: false, quick: true,
    build: () => input([guideDefaultNodePool()], [
      ...shaped(1500, ['500m', '1'], ['1Gi', '2Gi'], 7, { nodeSelector: { 'kubernetes.io/arch': 'arm64' } }, 'arm'),
      ...shaped(1500, ['500m', '1'], ['1Gi', '2Gi'], 8, { nodeSelector: { 'kubernetes.io/arch': 'amd64' } }, 'amd'),
    ]),
  },
  {
    name: 'daemonsets', generic: false, quick: true,
    build: () => input([guideDefaultNodePool()], genericPods(5000, 9), [
      daemonSet('node-exporter', { cpu: '100m', memory: '128Mi' }),
      daemonSet('fluent-bit', { cpu: '200m', memory: '256Mi' }),
      daemonSet('kube-proxy', { cpu: '100m', memory: '64Mi' }),
    ]),
  },
  { name: 'weighted-pools-limits', generic: false, quick: true, build: () => input(guidePools('guide-06.yaml'), genericPods(3000, 10)) },
  {
    name: 'spot-and-on-demand', generic: false, quick: true,
    build: () => input([guideDefaultNodePool()], [
      ...shaped(1500, ['250m', '1'], ['512Mi', '2Gi'], 11, { nodeSelector: { 'karpenter.sh/capacity-type': 'on-demand' } }, 'od'),
      ...shaped(1500, ['250m', '1'], ['512Mi', '2Gi'], 12, {}, 'any'),
    ]),
  },
  {
    name: 'small-and-large', generic: false, quick: true,
    build: () => input([guideDefaultNodePool()], [
      ...shaped(3000, ['100m'], ['128Mi', '256Mi'], 13, {}, 'small'),
      ...shaped(100, ['16'], ['64Gi'], 14, {}, 'large'),
    ]),
  },
];
