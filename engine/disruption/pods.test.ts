import { describe, expect, it } from 'vitest';
import { pdb, pod, stateNode } from '../../test/fixtures/builders.ts';
import {
  currentlyReschedulable,
  doNotDisrupt,
  evictionCost,
  movablePods,
  podBlock,
  reschedulablePods,
  rescheduleDisruptionCost,
  POD_DELETION_COST_ANNOTATION,
} from './pods.ts';

const cost = (v: string) => evictionCost(pod({ annotations: { [POD_DELETION_COST_ANNOTATION]: v } }));

describe('eviction cost (docs/karpenter/test-cases.md §1.4)', () => {
  it('is exactly 1.0 without deletion cost or priority', () => {
    expect(evictionCost(pod())).toBe(1);
  });

  it('grows with the deletion cost and shrinks below zero cost', () => {
    expect(cost('100')).toBeGreaterThan(1);
    expect(cost('-100')).toBeLessThan(1);
    expect(cost('101')).toBeGreaterThan(cost('100'));
    expect(cost('100')).toBeGreaterThan(cost('99'));
    expect(cost('100')).toBeCloseTo(1 + 100 / 2 ** 27, 12);
  });

  it('grows with priority', () => {
    expect(evictionCost(pod({ priority: 1 }))).toBeGreaterThan(1);
    expect(evictionCost(pod({ priority: -1 }))).toBeLessThan(1);
    expect(evictionCost(pod({ priority: 2 ** 25 }))).toBe(2);
  });

  it('is clamped to [-10, 10] and ignores an unparsable deletion cost', () => {
    expect(cost(String(2 ** 31))).toBe(10);
    expect(evictionCost(pod({ priority: -(2 ** 31) }))).toBe(-10);
    expect(cost('lots')).toBe(1);
  });
});

describe('reschedulable pods and RescheduleDisruptionCost', () => {
  it('leaves out DaemonSet, mirror, terminal and terminating non-StatefulSet pods', () => {
    const keep = pod({ name: 'web' });
    const sts = pod({ name: 'db-0', owner: { kind: 'StatefulSet', name: 'db' }, deletionTimestamp: 5 });
    const n = stateNode({
      pods: [
        keep,
        sts,
        pod({ owner: { kind: 'DaemonSet', name: 'ds' } }),
        pod({ owner: { kind: 'Node', name: 'n' } }),
        pod({ phase: 'Succeeded', nodeName: 'x' }),
        pod({ deletionTimestamp: 5 }),
      ],
    });
    expect(reschedulablePods(n).map((p) => p.name)).toEqual(['web', 'db-0']);
  });

  it('is 1 per node plus the positive eviction costs', () => {
    expect(rescheduleDisruptionCost([])).toBe(1);
    expect(rescheduleDisruptionCost([pod(), pod(), pod()])).toBe(4);
    // a pod with a very negative cost does not make the node non-empty
    expect(rescheduleDisruptionCost([pod({ priority: -(2 ** 27) })])).toBe(1);
  });
});

describe('do-not-disrupt', () => {
  const ann = (v: string, startTime?: number) =>
    pod({ annotations: { 'karpenter.sh/do-not-disrupt': v }, ...(startTime !== undefined ? { startTime } : {}) });

  it('"true" is always active; other words are invalid', () => {
    expect(doNotDisrupt(ann('true'), 0).state).toBe('active');
    expect(doNotDisrupt(ann('false'), 0).state).toBe('invalid');
    expect(doNotDisrupt(ann('invalid-format'), 0).state).toBe('invalid');
    expect(doNotDisrupt(ann('0s'), 0).state).toBe('invalid');
    expect(doNotDisrupt(pod(), 0).state).toBe('none');
  });

  it('a duration is active until startTime + duration, and always while the start time is unknown', () => {
    const p = ann('2m', 1_000);
    expect(doNotDisrupt(p, 1_000 + 119_999)).toEqual({ state: 'active', value: '2m', until: 121_000 });
    expect(doNotDisrupt(p, 121_000)).toEqual({ state: 'elapsed', value: '2m', since: 121_000 });
    expect(doNotDisrupt(ann('1h'), 10 ** 12).state).toBe('active');
  });
});

describe('pod blocks (§1.3 step 9)', () => {
  const labels = { app: 'web' };

  it('a PDB with no disruptions allowed blocks, naming it', () => {
    const n = stateNode({ pods: [pod({ labels })] });
    expect(podBlock(n, [pdb('web', { matchLabels: labels, disruptionsAllowed: 0 })], 0)?.message).toBe(
      'pdb prevents pod evictions (PodDisruptionBudget=[default/web])',
    );
    expect(podBlock(n, [pdb('web', { matchLabels: labels, disruptionsAllowed: 1 })], 0)).toBeUndefined();
  });

  it('a pod selected by two PDBs blocks, naming both', () => {
    const n = stateNode({ pods: [pod({ labels })] });
    const b = podBlock(
      n,
      [pdb('a', { matchLabels: labels, disruptionsAllowed: 1 }), pdb('b', { matchLabels: {}, disruptionsAllowed: 5 })],
      0,
    );
    expect(b?.message).toBe('eviction does not support multiple PDBs (PodDisruptionBudget(s)=[default/a default/b])');
  });

  it('AlwaysAllow lets unready pods go; other namespaces do not count', () => {
    const n = stateNode({ pods: [pod({ labels, ready: false })] });
    expect(
      podBlock(
        n,
        [pdb('web', { matchLabels: labels, disruptionsAllowed: 0, unhealthyPodEvictionPolicy: 'AlwaysAllow' })],
        0,
      ),
    ).toBeUndefined();
    expect(podBlock(n, [pdb('web', { matchLabels: labels, disruptionsAllowed: 0 })], 0)?.kind).toBe('pdb');
    expect(
      podBlock(n, [pdb('web', { namespace: 'other', matchLabels: labels, disruptionsAllowed: 0 })], 0),
    ).toBeUndefined();
  });

  it('mirror pods do not count for PDBs, DaemonSet pods do; pods tolerating the disrupted taint are skipped', () => {
    const block = [pdb('x', { matchLabels: labels, disruptionsAllowed: 0 })];
    expect(
      podBlock(stateNode({ pods: [pod({ labels, owner: { kind: 'Node', name: 'n' } })] }), block, 0),
    ).toBeUndefined();
    expect(
      podBlock(stateNode({ pods: [pod({ labels, owner: { kind: 'DaemonSet', name: 'd' } })] }), block, 0)?.kind,
    ).toBe('pdb');
    const tolerant = pod({ labels, tolerations: [{ key: 'karpenter.sh/disrupted', operator: 'Exists' }] });
    expect(podBlock(stateNode({ pods: [tolerant] }), block, 0)).toBeUndefined();
  });

  it('do-not-disrupt comes first and mirror or DaemonSet pods can carry it', () => {
    const dnd = { 'karpenter.sh/do-not-disrupt': 'true' };
    for (const owner of [
      { kind: 'Node', name: 'n' },
      { kind: 'DaemonSet', name: 'd' },
    ]) {
      const b = podBlock(stateNode({ pods: [pod({ name: 'p', annotations: dnd, owner })] }), [], 0);
      expect(b?.message).toBe('pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)');
    }
  });

  it('terminal and terminating pods never block', () => {
    const dnd = { 'karpenter.sh/do-not-disrupt': 'true' };
    const block = [pdb('x', { matchLabels: labels, disruptionsAllowed: 0 })];
    for (const p of [
      pod({ labels, annotations: dnd, phase: 'Succeeded', nodeName: 'n' }),
      pod({ labels, annotations: dnd, phase: 'Failed', nodeName: 'n' }),
      pod({ labels, annotations: dnd, deletionTimestamp: 1 }),
    ]) {
      expect(podBlock(stateNode({ pods: [p] }), block, 0)).toBeUndefined();
    }
  });

  it('only spec-level fully blocking PDBs stop a pod from moving in a simulation', () => {
    const p = pod({ labels });
    expect(currentlyReschedulable(p, [pdb('x', { matchLabels: labels, disruptionsAllowed: 0 })], 0)).toBe(true);
    expect(
      currentlyReschedulable(p, [pdb('x', { matchLabels: labels, disruptionsAllowed: 0, maxUnavailable: '0%' })], 0),
    ).toBe(false);
    expect(
      currentlyReschedulable(p, [pdb('x', { matchLabels: labels, disruptionsAllowed: 0, maxUnavailable: 0 })], 0),
    ).toBe(false);
    expect(
      currentlyReschedulable(p, [pdb('x', { matchLabels: labels, disruptionsAllowed: 0, minAvailable: '100%' })], 0),
    ).toBe(false);
    expect(currentlyReschedulable(pod({ annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }), [], 0)).toBe(false);
  });
});

describe('movable pods (remembered per pods array, PDB list and time)', () => {
  it('follows the time, the PDBs and the pods the node carries', () => {
    const pinned = pod({ labels: { app: 'a' }, annotations: { 'karpenter.sh/do-not-disrupt': '10m' }, startTime: 0 });
    const free = pod({ labels: { app: 'b' } });
    const n = stateNode({ name: 'n', pods: [pinned, free] });
    const none: ReturnType<typeof pdb>[] = [];
    expect(movablePods(n, none, 60_000).map((p) => p.labels['app'])).toEqual(['b']);
    // ten minutes after start the annotation has elapsed
    expect(movablePods(n, none, 600_000).map((p) => p.labels['app'])).toEqual(['a', 'b']);
    const blocking = [pdb('b', { matchLabels: { app: 'b' }, disruptionsAllowed: 0, maxUnavailable: 0 })];
    expect(movablePods(n, blocking, 600_000).map((p) => p.labels['app'])).toEqual(['a']);
    expect(movablePods({ ...n, pods: [free] }, none, 600_000).map((p) => p.labels['app'])).toEqual(['b']);
  });
});
