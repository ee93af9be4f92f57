// `node --import tsx test/perf/plans-digest.ts [tree] [--quick]`: digests of the plans a checkout makes, to show a
// refactor changed none. Run it on two trees and compare the lines (`diff <(... treeA) <(... treeB)`):
// - the karpenter suite's mixes (diverse, preference) and the generic mix: the wasm solver without its
//   improvement phase, the reference solver, and the encoded input block's bytes; the wasm solver with the
//   phase (its budget is work, so its plans are deterministic too) on the generic mix;
// - 150 random problems from the equivalence test's arbitraries (fixed seed): wasm and reference plans;
// - consolidation on a fragmented cluster: every decision of Karpenter's methods (100 nodes) and of the
//   repack (1,000 nodes), one command applied per loop, simulations without the improvement phase.
// The tree's engine is loaded from its own files (engine/index.ts, plus engine/local.ts where it exists).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import fc from 'fast-check';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const tree = args.find((a) => !a.startsWith('--')) ?? new URL('../..', import.meta.url).pathname;
type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const api: Any = {
  ...(await import(`${tree}/engine/index.ts`)),
  ...(existsSync(`${tree}/engine/local.ts`) ? await import(`${tree}/engine/local.ts`) : {}),
};
const { encodeProvision } = await import(`${tree}/engine/abi/encode.ts`);
const { diversePods, preferencePods, karpenterInput } = await import(`${tree}/bench/scenarios/karpenter.ts`);
const { genericInput } = await import(`${tree}/bench/scenarios/generic.ts`);
const { fragmentedCluster } = await import(`${tree}/bench/suites/consolidation-scenarios.ts`);
const { problemArb } = await import(`${tree}/test/solver/arbitraries.ts`);
const { normalizePlan } = await import(`${tree}/test/solver/normalize.ts`);

const sha = (x: unknown): string =>
  createHash('sha256')
    .update(typeof x === 'string' ? x : x instanceof Uint8Array ? x : JSON.stringify(x))
    .digest('hex')
    .slice(0, 16);
const line = (name: string, digest: string): void => void process.stdout.write(`${name} ${digest}\n`);
const exact = new api.WasmSolver({ improve: false });

function plans(name: string, input: Any, reference: boolean): void {
  line(`${name} wasm`, sha(normalizePlan(exact.solve(input))));
  line(`${name} block`, sha(encodeProvision(input, { improve: false }).block));
  if (reference) line(`${name} reference`, sha(normalizePlan(api.solveReference(input))));
}

for (const n of quick ? [2000] : [2000, 10000, 20000]) plans(`diverse-${n}`, karpenterInput(diversePods(n)), n <= 2000);
plans('preference-4000', karpenterInput(preferencePods(4000).pods), true);
for (const n of quick ? [2000] : [2000, 10000]) plans(`generic-${n}`, genericInput(n), n <= 2000);
const improved = new api.WasmSolver();
for (const n of quick ? [2000] : [2000, 20000, 100000])
  line(`generic-${n} improved`, sha(normalizePlan(improved.solve(genericInput(n)))));

const problems = fc.sample(problemArb, { seed: 20261202, numRuns: quick ? 40 : 150 });
const all: string[] = [];
for (const input of problems)
  all.push(sha(normalizePlan(exact.solve(input))), sha(normalizePlan(api.solveReference(input))));
line(`arbitraries-${problems.length} wasm+reference`, sha(all.join(',')));

function decisionDigest(d: Any): string {
  if (d.kind === 'noop') return sha(d.explanations.map((e: Any) => `${e.node}:${e.code}`));
  const cmds = [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])].map((c: Any) => ({
    kind: c.kind,
    method: c.method,
    candidates: c.candidates.map((x: Any) => x.name),
    savings: c.savingsPerHour.toFixed(6),
    replacements: c.replacements.map((r: Any) => ({
      pods: [...r.pods].sort(),
      its: r.instanceTypes.map((o: Any) => o.name),
    })),
    moved: c.podsMoved.map((m: Any) => `${m.uid}>${m.to}`).sort(),
  }));
  return sha({ cmds, explanations: d.explanations.map((e: Any) => `${e.node}:${e.code}`) });
}

async function consolidation(nodes: number, repack: 'off' | 'only', loops: number): Promise<void> {
  const sc = await fragmentedCluster(nodes, 20_261_129 + nodes, exact);
  let s = sc.snapshot;
  let state = api.INITIAL_LOOP_STATE;
  const out: string[] = [];
  for (let i = 0; i < loops; i++) {
    const r = await api.disrupt(s, {
      solver: exact,
      repack,
      state,
      consolidationState: i,
      methods: repack === 'off' ? undefined : ['repack'],
      repackDeadlineMs: 1e12,
    });
    state = r.state;
    const d = r.decision;
    out.push(decisionDigest(d));
    if (d.kind === 'noop') break;
    for (const c of [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])])
      s = api.applyCommand(s, c, (k: number) => `v${i}-r${k}`);
  }
  line(`consolidation-${nodes} ${repack} (${out.length} decisions)`, sha(out.join(',')));
}

await consolidation(100, 'off', quick ? 3 : 8);
await consolidation(quick ? 200 : 1000, 'only', quick ? 2 : 4);
