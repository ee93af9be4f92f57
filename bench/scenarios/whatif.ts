// What-if scenarios for the pool benchmark: a seeded fragmented cluster (nodes of mixed types in three
// Seoul zones, half full of generic pods) plus some pending pods, under the guide's default NodePool.
// runScenario() runs one through the engine's whatIf (provisioning, consolidation, LP bound) on a worker.
import { createHash } from 'node:crypto';
import type { Built, Engine, InstanceType, NodePool, StateNode } from '../../engine/index.ts';
import { snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { catalog, genericPods, guideDefaultNodePool, REGION } from './generic.ts';
import { mulberry32, pick } from './random.ts';

export interface ScenarioInput {
  readonly seed: number;
  readonly nodes: number;
  readonly pending: number;
}

export interface ScenarioResult {
  readonly seed: number;
  readonly costPerHourBefore: number;
  readonly costPerHourAfter: number;
  readonly moves: number;
  readonly lowerBoundPerHour: number;
  /** SHA-256 of the whole report's JSON: runs that must agree are compared on every field, not only the costs. */
  readonly digest: string;
}

/** The NodePool every scenario runs under, read from the guide once (a batch's jobs share it). */
let pool: NodePool | undefined;

const TYPES = ['m6i.xlarge', 'm6i.2xlarge', 'c6i.2xlarge', 'r6i.xlarge', 'm7g.xlarge', 'c7g.2xlarge'];

export function scenario(input: ScenarioInput): Built {
  const rng = mulberry32(input.seed);
  const all = catalog();
  const byName = new Map(all.map((t) => [t.name, t] as const));
  pool ??= guideDefaultNodePool();
  const pods = genericPods(input.nodes * 12 + input.pending, input.seed);
  const nodes: StateNode[] = [];
  let next = 0;
  for (let i = 0; i < input.nodes; i++) {
    const it: InstanceType = byName.get(pick(rng, TYPES))!;
    const on = [];
    let cpu = 0;
    // Fill to about half of the node's cpu: the fragmentation consolidation is for.
    while (
      next < pods.length - input.pending &&
      cpu + (pods[next]!.requests['cpu'] ?? 0) < (it.allocatable['cpu'] ?? 0) / 2
    ) {
      cpu += pods[next]!.requests['cpu'] ?? 0;
      on.push(pods[next++]!);
    }
    nodes.push(
      stateNode({
        name: `node-${i}`,
        instanceType: it,
        nodePool: pool.name,
        zone: `${REGION}${pick(rng, ['a', 'b', 'c'])}`,
        capacityType: pick(rng, ['on-demand', 'spot']),
        pods: on,
      }),
    );
  }
  const s = snapshot({
    now: Date.parse('2026-11-30T12:00:00Z'),
    nodePools: [pool],
    instanceTypes: new Map([[pool.name, all]]),
    nodes,
    pendingPods: pods.slice(pods.length - input.pending),
  });
  return { snapshot: s, region: REGION, catalog: byName, warnings: [] };
}

/** One scenario through the engine's whatIf (Karpenter's exact algorithm); `built` when made ahead. */
export async function runScenario(
  engine: Engine,
  input: ScenarioInput,
  built: Built = scenario(input),
): Promise<ScenarioResult> {
  const r = await engine.whatIf({
    built,
    sources: [`seed-${input.seed}`],
    mode: 'consolidate',
    exact: true,
  });
  return {
    seed: input.seed,
    costPerHourBefore: r.costPerHourBefore,
    costPerHourAfter: r.costPerHourAfter,
    moves: r.moves.length,
    lowerBoundPerHour: r.lowerBoundPerHour,
    digest: createHash('sha256').update(JSON.stringify(r)).digest('hex'),
  };
}
