// Explanations in people's words (issue 4 item 6), on the real EC2 catalog where prices matter.
import { describe, expect, it } from 'vitest';
import { nodePool, pdb, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { ec2InstanceTypes } from '../catalog/index.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../domain/types.ts';
import { solveReference } from '../solver/reference/scheduler.ts';
import { disrupt } from './disrupt.ts';
import { explainNode } from './explain.ts';

const solver = { name: 'reference', solve: solveReference };
const catalog = ec2InstanceTypes({ region: 'us-east-1' });
const m6i = catalog.filter((t) => t.name.startsWith('m6i.'));
const large = m6i.find((t) => t.name === 'm6i.large')!;
const onM6i = (o: Parameters<typeof stateNode>[0] = {}) =>
  stateNode({ instanceType: large, zone: 'us-east-1a', capacityType: 'on-demand', ...o });
const m6iPool = (o: Parameters<typeof nodePool>[0] = {}) =>
  nodePool({
    consolidateAfter: 0,
    budgets: [{ nodes: '100%' }],
    requirements: [
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m6i'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    ],
    ...o,
  });

describe('explanations', () => {
  it('says why there is no cheaper replacement, with the cheapest fitting option and both prices', async () => {
    const s = snapshot({
      nodePools: [m6iPool()],
      instanceTypes: m6i,
      nodes: [onM6i({ name: 'web-1', pods: [pod({ cpu: '1', memory: '2Gi' })] })],
      options: DEFAULT_ENGINE_OPTIONS,
    });
    const r = await explainNode(s, 'web-1', { solver });
    expect(r.disruptable).toBe(false);
    if (r.disruptable) return;
    expect(r.explanation.message).toBe(
      'no cheaper replacement: cheapest fitting option m6i.large $0.0960/h is not below $0.0960/h',
    );
    expect(r.explanation.data).toMatchObject({
      cheapestOption: 'm6i.large',
      cheapestPrice: 0.096,
      candidatePrice: 0.096,
    });
    expect(r.explanation.event).toEqual({ reason: 'Unconsolidatable', message: "Can't replace with a cheaper node" });
  });

  it('names the PDB that allows no disruptions and the do-not-disrupt pod', async () => {
    const web = pod({ name: 'web-0', labels: { app: 'web' } });
    const db = pod({ name: 'db-0', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    const s = snapshot({
      nodePools: [m6iPool()],
      instanceTypes: m6i,
      nodes: [onM6i({ name: 'a', pods: [web] }), onM6i({ name: 'b', pods: [db] })],
      pdbs: [pdb('web', { matchLabels: { app: 'web' }, disruptionsAllowed: 0 })],
    });
    const r = await disrupt(s, { solver, repack: 'off' });
    expect(r.decision.kind).toBe('noop');
    const byNode = new Map(r.decision.explanations.map((e) => [e.node, e.message]));
    expect(byNode.get('a')).toBe('pdb default/web allows 0 disruptions (pod default/web-0)');
    expect(byNode.get('b')).toBe('pod default/db-0 has karpenter.sh/do-not-disrupt');
  });

  it('says how long consolidateAfter still runs', async () => {
    const s = snapshot({
      now: 10 * 60_000,
      nodePools: [m6iPool({ consolidateAfter: 5 * 60_000 })],
      instanceTypes: m6i,
      nodes: [
        onM6i({
          name: 'fresh',
          lastPodEventTime: 10 * 60_000 - 168_000,
          conditions: { initializedAt: 0 },
          pods: [pod({ cpu: '1' })],
        }),
      ],
    });
    const r = await explainNode(s, 'fresh', { solver });
    expect(!r.disruptable && r.explanation.message).toBe('consolidateAfter 5m not elapsed (2m12s left)');
  });

  it('says what it would do with a node that can go, and what it saves', async () => {
    const xl = m6i.find((t) => t.name === 'm6i.xlarge')!;
    const s = snapshot({
      nodePools: [m6iPool()],
      instanceTypes: m6i,
      nodes: [
        stateNode({
          name: 'big',
          instanceType: xl,
          zone: 'us-east-1a',
          capacityType: 'on-demand',
          pods: [pod({ cpu: '500m', memory: '1Gi' })],
        }),
      ],
    });
    const r = await explainNode(s, 'big', { solver });
    expect(r.disruptable).toBe(true);
    if (!r.disruptable) return;
    expect(r.message).toBe('would be replaced by m6i.large (Underutilized), saving $0.0960/h, moving 1 pods');
    expect(r.command.savingsPerHour).toBeCloseTo(0.096, 9);
  });

  it('refuses an unknown node by name', async () => {
    await expect(explainNode(snapshot(), 'ghost')).rejects.toThrow(
      'explainNode: the snapshot has no node named "ghost"',
    );
  });

  it('gives every node a reason in a no-op decision', async () => {
    const s = snapshot({
      nodePools: [m6iPool()],
      instanceTypes: m6i,
      nodes: [onM6i({ name: 'x', pods: [pod({ cpu: '1' })] }), stateNode({ name: 'y', managed: false })],
    });
    const r = await disrupt(s, { solver, repack: 'off' });
    expect(r.decision.kind).toBe('noop');
    expect(r.decision.explanations.map((e) => [e.node, e.code])).toEqual([
      ['x', 'no-cheaper-replacement'],
      ['y', 'not-managed'],
    ]);
  });
});
