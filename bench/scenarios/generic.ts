// Generic pod mixes on the real EC2 catalog under the guide's default NodePool (examples/guide/guide-01.yaml:
// categories c/m/r, generation > 5, on-demand and spot, three Seoul zones, amd64 and arm64), with its limits
// removed so that 100,000 pods can be placed. Pod sizes follow Karpenter's benchmark draw (CPU from 100m to
// 1500m, memory from 100Mi to 4Gi), seeded.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_ENGINE_OPTIONS,
  ec2InstanceTypes,
  parseText,
  type InstanceType,
  type NodePool,
  type Pod,
  type ProvisionInput,
} from '../../engine/index.ts';
import { pod } from '../../test/fixtures/builders.ts';
import { mulberry32, pick } from './random.ts';

export const CPUS = ['100m', '250m', '500m', '1000m', '1500m'];
export const MEMS = ['100Mi', '256Mi', '512Mi', '1024Mi', '2048Mi', '4096Mi'];
export const REGION = 'ap-northeast-2';

let cachedTypes: InstanceType[] | undefined;
export function catalog(): InstanceType[] {
  return (cachedTypes ??= ec2InstanceTypes({ region: REGION }));
}

/** The guide's `default` NodePool (guide-01), ready, without limits. */
export function guideDefaultNodePool(): NodePool {
  const file = fileURLToPath(new URL('../../examples/guide/guide-01.yaml', import.meta.url));
  for (const e of parseText(readFileSync(file, 'utf8'), { assumeReady: true })) {
    if (e.result.ok && e.result.value.kind === 'NodePool') return { ...e.result.value.value, limits: {} };
  }
  throw new Error(`no NodePool in ${file}`);
}

export function genericPods(n: number, seed = 42): Pod[] {
  const rng = mulberry32(seed);
  const out: Pod[] = [];
  for (let i = 0; i < n; i++) {
    const cpu = pick(rng, CPUS);
    out.push(
      pod({
        name: `gen-${i}`,
        uid: `uid-gen-${i}`,
        cpu,
        memory: pick(rng, MEMS),
        createdAt: i,
        labels: { app: `app-${i % 20}` },
      }),
    );
  }
  return out;
}

export function genericInput(n: number, seed = 42): ProvisionInput {
  const pool = guideDefaultNodePool();
  return {
    nodePools: [pool],
    instanceTypes: new Map([[pool.name, catalog()]]),
    nodes: [],
    pods: genericPods(n, seed),
    daemonSets: [],
    options: DEFAULT_ENGINE_OPTIONS,
  };
}
