// `npm run bench -- karpenter`: Karpenter's own scheduling benchmark (docs/karpenter/scheduling.md §5): the 400 fake
// instance types, the diverse pod mix at 1 to 20,000 pods, and the 4,000 preference pods under Respect and
// Ignore. Karpenter's algorithm (the wasm solver without its improvement phase) must produce the node
// counts of §5.6; the reference solver (the same algorithm in TypeScript) runs on the smaller sizes for the
// speed ratio. Each timing is one full call: encode, solve, decode, on one core.
import { DEFAULT_ENGINE_OPTIONS, type ProvisionInput, type ProvisionPlan } from '../../engine/index.ts';
import { solveReference, WasmSolver } from '../../engine/local.ts';
import { measure } from '../measure.ts';
import type { BenchRow } from '../report.ts';
import { diversePods, karpenterInput, preferencePods } from '../scenarios/karpenter.ts';
import type { SuiteOptions } from './solver.ts';

/** §5.6: diverse sets need one node per hostname anti-affinity pod; preference sets per policy. */
function expectedNodes(scenario: string, pods: number, cpu?: string, memory?: string): number | undefined {
  if (scenario.startsWith('diverse')) return Math.max(1, Math.floor(pods / 5));
  if (scenario.endsWith('respect')) return pods;
  if (scenario.endsWith('ignore') && cpu && memory) {
    const milli = cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000;
    const mib = Number(memory.replace('Mi', ''));
    const perNode = Math.min(Math.floor(399_900 / milli), Math.floor((800 * 1024 - 10) / mib), 4000);
    return Math.ceil(pods / perNode);
  }
  return undefined;
}

export async function run(opts: SuiteOptions): Promise<BenchRow[]> {
  const exact = new WasmSolver({ build: 'release', improve: false });
  const sizes = opts.quick ? [1, 100, 1000, 5000, 20000] : [1, 50, 100, 500, 1000, 2000, 5000, 10000, 20000];
  const cases: Array<{ scenario: string; input: ProvisionInput; cpu?: string; memory?: string }> = [];
  for (const n of sizes) cases.push({ scenario: `diverse-${n}`, input: karpenterInput(diversePods(n)) });
  const pref = preferencePods(4000);
  for (const policy of ['Respect', 'Ignore'] as const) {
    cases.push({
      scenario: `preferences-4000-${policy.toLowerCase()}`,
      input: { ...karpenterInput(pref.pods), options: { ...DEFAULT_ENGINE_OPTIONS, preferencePolicy: policy } },
      cpu: pref.cpu,
      memory: pref.memory,
    });
  }
  const rows: BenchRow[] = [];
  for (const c of cases) {
    const n = c.input.pods.length;
    const engines: Array<[string, (i: ProvisionInput) => ProvisionPlan]> = [
      ['wasm-release-exact', (i) => exact.solve(i)],
    ];
    if (n <= (opts.quick ? 1000 : 2000)) engines.push(['reference', (i) => solveReference(i)]);
    for (const [name, solve] of engines) {
      opts.progress(`karpenter: ${c.scenario}, ${name}`);
      let plan: ProvisionPlan | undefined;
      const slow = name === 'reference' && n >= 1000;
      const t = await measure(
        `${name}-${c.scenario}`,
        () => {
          plan = solve(c.input);
        },
        slow ? { iterations: 2, timeMs: 0 } : { timeMs: 2000 },
      );
      const expected = expectedNodes(c.scenario, n, c.cpu, c.memory);
      rows.push({
        suite: 'karpenter',
        scenario: c.scenario,
        engine: name,
        pods: n,
        nodes: plan!.newNodeClaims.length,
        expectedNodes: expected,
        nodesMatch: expected === undefined ? undefined : plan!.newNodeClaims.length === expected,
        costPerHour: plan!.costPerHour,
        ms: t.ms,
        madMs: t.madMs,
        samples: t.samples,
        podsPerSec: Math.round((n / t.ms) * 1000),
        unschedulable: plan!.unschedulable.length,
      });
    }
  }
  return rows;
}
