// docs/karpenter/test-cases.md §4 (staticdrift_test.go): static NodePools (replicas) replace drifted nodes one for
// one from the template, within the budget and the pool's node limit. "Executing" a command removes the
// candidate and adds its replacement (the cluster-state NodePool counts are the controller's).
import { beforeEach, describe, expect, it } from 'vitest';
import type { NodePool, Snapshot } from '../../../engine/domain/types.ts';
import type { Command } from '../../../engine/disruption/types.ts';
import { resetIds } from '../../fixtures/builders.ts';
import { bigNode, env, execute, managedNodes, pool, reconcile } from './harness.ts';

beforeEach(() => resetIds());

const staticPool = (replicas: number, o: Parameters<typeof pool>[0] = {}) =>
  pool({ replicas, budgets: [{ nodes: '100%' }], ...o });
const drifted = (poolName = 'default', o: Parameters<typeof bigNode>[0] = {}) =>
  bigNode({
    nodePool: poolName,
    conditions: { initializedAt: 0, drifted: { reason: 'NodePoolDrifted', since: 0 } },
    ...o,
  });
const commandsOf = (d: Awaited<ReturnType<typeof reconcile>>['decision']): Command[] =>
  d.kind === 'noop' ? [] : [d, ...(d.concurrent ?? [])];

async function run(pools: NodePool[], nodes: ReturnType<typeof drifted>[]) {
  const s = env({ nodePools: pools, nodes });
  const r = await reconcile(s);
  return { s, r, commands: commandsOf(r.decision), after: execute(s, r.decision) };
}

function allowed(r: Awaited<ReturnType<typeof reconcile>>, pool = 'default'): number | undefined {
  return r.metrics.allowedDisruptions.find((g) => g.nodePool === pool && g.reason === 'Drifted')?.allowed;
}

describe('§4.1 Budgets', () => {
  // Upstream uses 5 nodes with replicas 5 here (20% of 5 = 1); the catalog's "10 nodes" would give 2.
  const five = () => Array.from({ length: 5 }, () => drifted());

  it('should respect disruption budgets (Nodes Count) for static drift', async () => {
    const { r, commands, after } = await run(
      [staticPool(5, { budgets: [{ nodes: '2', reasons: ['Drifted'] }] })],
      five(),
    );
    expect(allowed(r)).toBe(2);
    expect(commands).toHaveLength(2);
    expect(
      commands.every((c) => c.kind === 'replace' && c.replacements.length === 1 && c.metricLabels.reason === 'drifted'),
    ).toBe(true);
    expect(managedNodes(after)).toHaveLength(5);
  });
  it('should respect disruption budgets (Nodes Percentage) for static drift', async () => {
    const { r, commands, after } = await run(
      [staticPool(5, { budgets: [{ nodes: '20%', reasons: ['Drifted'] }] })],
      five(),
    );
    expect(allowed(r)).toBe(1);
    expect(commands).toHaveLength(1);
    expect(managedNodes(after)).toHaveLength(5);
  });
  it('should respect budgets for multiple static nodepools', async () => {
    const pools = [
      staticPool(4, { name: 'static-nodepool-1', budgets: [{ nodes: '1', reasons: ['Drifted'] }] }),
      staticPool(3, { name: 'static-nodepool-2', budgets: [{ nodes: '2', reasons: ['Drifted'] }] }),
      staticPool(2, { name: 'static-nodepool-3', budgets: [{ nodes: '100%', reasons: ['Drifted'] }] }),
    ];
    const { r, commands, after } = await run(
      pools,
      pools.flatMap((p) => [drifted(p.name), drifted(p.name)]),
    );
    expect(pools.map((p) => allowed(r, p.name))).toEqual([1, 2, 2]);
    const perPool = (name: string) => commands.filter((c) => c.candidates[0]!.nodePool === name).length;
    expect(pools.map((p) => perPool(p.name))).toEqual([1, 2, 2]);
    expect(managedNodes(after)).toHaveLength(6);
  });
});

describe('§4.2 Limits and Scaling', () => {
  const limited = (replicas: number, limit?: number) =>
    staticPool(replicas, limit === undefined ? {} : { limits: { nodes: String(limit) } });
  const n = (k: number) => Array.from({ length: k }, () => drifted());

  it('should not drift nodes when we cannot acquire limits', async () => {
    const { commands, r } = await run([limited(5, 5)], n(5));
    expect(commands).toHaveLength(0);
    expect(r.decision.explanations.every((e) => e.code === 'static-limits')).toBe(true);
  });
  it('should drift nodes when we can acquire limits', async () => {
    const { r, commands, after } = await run([limited(5, 5)], n(2));
    expect(allowed(r)).toBe(2);
    expect(commands).toHaveLength(2);
    expect(managedNodes(after)).toHaveLength(2);
  });
  it('should drift partially when we can acquire some limits', async () => {
    const { r, commands } = await run([limited(5, 7)], n(5));
    expect(allowed(r)).toBe(5);
    expect(commands).toHaveLength(2);
  });
  it('should keep drifting partially for each reconcile', async () => {
    let s: Snapshot = env({ nodePools: [limited(5, 6)], nodes: n(5) });
    for (let i = 0; i < 5; i++) {
      const r = await reconcile(s);
      const cmds = commandsOf(r.decision);
      expect(cmds).toHaveLength(1);
      // the replacement is launched while the candidate still runs: at most 6 nodes at once
      expect(managedNodes(s).length + cmds[0]!.replacements.length).toBeLessThanOrEqual(6);
      s = execute(s, r.decision);
    }
    expect(managedNodes(s).filter((x) => x.conditions.drifted)).toHaveLength(0);
  });
  it('should wait until nodes are deprovisioned when we are overscaled', async () => {
    const nodes = n(2);
    const first = await run([limited(1)], nodes);
    expect(first.commands).toHaveLength(0);
    const second = await run([limited(1)], nodes.slice(1));
    expect(second.commands).toHaveLength(1);
  });
});

describe('§4.3 Multiple NodePools', () => {
  it('should handle drift for multiple static NodePools independently', async () => {
    const pools = [
      staticPool(3, { name: 'p1' }),
      staticPool(2, { name: 'p2', limits: { nodes: '2' } }),
      staticPool(2, { name: 'p3' }),
    ];
    const { commands } = await run(
      pools,
      pools.flatMap((p) => [drifted(p.name), drifted(p.name)]),
    );
    const perPool = (name: string) => commands.filter((c) => c.candidates[0]!.nodePool === name).length;
    expect(pools.map((p) => perPool(p.name))).toEqual([2, 0, 2]);
  });
});

describe('§4.4 Edge Cases', () => {
  it('should handle zero replicas', async () => {
    expect((await run([staticPool(0)], [drifted()])).commands).toHaveLength(0);
  });
  it('should handle missing node limits', async () => {
    expect(
      (
        await run(
          [staticPool(5)],
          Array.from({ length: 5 }, () => drifted()),
        )
      ).commands,
    ).toHaveLength(5);
  });
  it('should not drift nodes without the Drifted condition', async () => {
    expect((await run([staticPool(1)], [bigNode({ conditions: { initializedAt: 0 } })])).commands).toHaveLength(0);
  });
  it('should not drift nodes with Drifted=False', async () => {
    const { r } = await run([staticPool(1)], [bigNode({ conditions: { initializedAt: 0 } })]);
    expect(r.metrics.eligibleNodes.Drifted).toBe(0);
  });
  it('should not drift nodes with the do-not-disrupt annotation', async () => {
    expect(
      (await run([staticPool(1)], [drifted('default', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]))
        .commands,
    ).toHaveLength(0);
  });
});

describe('static replacements', () => {
  it('are built from the template: every pool instance type, cheapest first, labels and taints of the template', async () => {
    const p = staticPool(1, { labels: { team: 'a' }, taints: [{ key: 'dedicated', effect: 'NoSchedule' }] });
    const { commands } = await run([p], [drifted()]);
    const claim = commands[0]!.replacements[0]!;
    expect(claim.labels).toEqual({ team: 'a' });
    expect(claim.taints).toEqual([{ key: 'dedicated', effect: 'NoSchedule' }]);
    expect(claim.pods).toEqual([]);
    const prices = claim.instanceTypes.map((o) => o.price);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
    expect(claim.instanceTypes.length).toBeGreaterThan(100);
  });
});
