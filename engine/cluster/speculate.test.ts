// A provisioning decision solved ahead of its batch window's close (ClusterEngine.speculate): the decision at
// the close gets the kept plan only when its cluster differs from the speculative one in nothing but the clock
// and it asks for the same pods with the same options; any pod, node or option that changed in between makes it
// solve again, and the plan it returns is always the one a solve of its own snapshot gives.
import { afterAll, describe, expect, it } from 'vitest';
import { nodePool, pods, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { normalizePlan } from '../../test/solver/normalize.ts';
import { DEFAULT_ENGINE_OPTIONS, type Pod, type Snapshot, type StateNode } from '../domain/types.ts';
import { createEngine } from '../engine.ts';
import type { ProvisionPlan } from '../model/types.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import type { SnapshotDelta } from './delta.ts';
import { speculationClock } from '../pool/speculation-clock.ts';
import { calledOff, SpeculationFlag, SpeculativePlan } from './speculation.ts';

const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
const its = defaultFakeInstanceTypes();
const pool = nodePool();

const pending = (n: number, cpu: string): Pod[] =>
  pods(n, { cpu, memory: '1Gi' }).map((p) => ({ ...p, unschedulable: true }));

const cluster = (pendingPods: readonly Pod[], nodes: StateNode[] = [], now = 1_000): Snapshot =>
  snapshot({ nodePools: [pool], instanceTypes: its, pendingPods: [...pendingPods], nodes, now });

const placed = (plan: ProvisionPlan): string[] =>
  [...plan.newNodeClaims.flatMap((nc) => nc.pods), ...[...plan.existing.values()].flat()].sort();

describe('a provisioning decision solved ahead of the close', () => {
  const engine = createEngine({ threads: 1, improveWork: 1e5 });
  afterAll(() => engine.close());

  it('is returned at the close when only the clock moved, and is the plan a solve at the close makes', async () => {
    const c = engine.cluster('unchanged');
    const batch = [...pending(30, '700m'), ...pending(20, '1500m')];
    await c.speculate(cluster(batch, [], 1_000), batch, { wellKnownLabels });
    expect(c.lastReused()).toBe(false);
    const atClose = cluster(batch, [], 2_000);
    // The clock the decision's phases are timed by is not part of the operation: the plan is still taken.
    const plan = await c.provision(atClose, batch, { wellKnownLabels, clock: () => performance.now() });
    expect(c.lastReused()).toBe(true);
    expect(c.lastShipped()).toMatchObject({ pods: 0, nodes: 0, bytes: 0 });
    expect(c.lastProvision()).toMatchObject({ speculative: 'taken', workerMs: 0 });
    const solved = await engine.provision(atClose, batch, { wellKnownLabels });
    expect(normalizePlan(plan)).toEqual(normalizePlan(solved));
    expect(placed(plan)).toEqual(batch.map((p) => p.uid).sort());
    await c.close();
  });

  it('is not used when a pod arrived after it: the plan places that pod too', async () => {
    const c = engine.cluster('pod-after');
    const batch = pending(12, '1');
    await c.speculate(cluster(batch), batch, { wellKnownLabels });
    const late = pending(1, '3');
    const all = [...batch, ...late];
    const atClose = cluster(all);
    const plan = await c.provision(atClose, all, { wellKnownLabels, clock: () => performance.now() });
    expect(c.lastReused()).toBe(false);
    expect(c.lastProvision()?.speculative).toBe('model changed');
    // What changed: no call moved the model since, the decision's own delta carries the pod and the pending list.
    expect(c.lastProvision()?.modelChange).toMatchObject({
      since: {},
      delta: { pods: 1, pending: 13, podsSample: [`${late[0]!.namespace}/${late[0]!.name}`] },
    });
    expect(c.lastProvision()?.workerMs).toBeGreaterThan(0);
    expect(placed(plan)).toContain(late[0]!.uid);
    expect(normalizePlan(plan)).toEqual(normalizePlan(await engine.provision(atClose, all, { wellKnownLabels })));
    await c.close();
  });

  it('is carried past another call that moved only the clock, and is the plan a solve at the close makes', async () => {
    const c = engine.cluster('clock-moved-by');
    const batch = pending(6, '1');
    await c.speculate(cluster(batch), batch, { wellKnownLabels });
    // A disruption pass over the same cluster: its delta carries the clock alone, and it leaves the model as it was.
    await c.disrupt(cluster(batch, [], 1_500));
    const atClose = cluster(batch, [], 2_000);
    const plan = await c.provision(atClose, batch, { wellKnownLabels, clock: () => performance.now() });
    expect(c.lastProvision()).toMatchObject({ speculative: 'taken', workerMs: 0 });
    expect(normalizePlan(plan)).toEqual(normalizePlan(await engine.provision(atClose, batch, { wellKnownLabels })));
    await c.close();
  });

  it('is not used after another call changed the model, and says which', async () => {
    const c = engine.cluster('moved-by');
    const batch = pending(6, '1');
    await c.speculate(cluster(batch), batch, { wellKnownLabels });
    const roomy = stateNode({ name: 'joined', allocatable: { cpu: '16', memory: '64Gi', pods: '110' } });
    await c.disrupt(cluster(batch, [roomy], 1_500));
    // A clock-only call after it does not bring the plan back.
    await c.disrupt(cluster(batch, [roomy], 1_700));
    const atClose = cluster(batch, [roomy], 2_000);
    const plan = await c.provision(atClose, batch, { wellKnownLabels, clock: () => performance.now() });
    expect(c.lastProvision()).toMatchObject({
      speculative: 'model changed',
      modelChange: { since: { disrupt: 1, 'disrupt (clock only)': 1 }, delta: {} },
    });
    expect(plan.existing.get('joined')?.length).toBe(6);
    expect(normalizePlan(plan)).toEqual(normalizePlan(await engine.provision(atClose, batch, { wellKnownLabels })));
    await c.close();
  });

  it('is not carried past a carryOut, whose operation changes the model even when its delta is the clock alone', async () => {
    const c = engine.cluster('carried-out');
    const batch = pending(6, '1');
    await c.speculate(cluster(batch), batch, { wellKnownLabels });
    await c.carryOut(cluster(batch, [], 1_500), []);
    await c.provision(cluster(batch, [], 2_000), batch, { wellKnownLabels, clock: () => performance.now() });
    expect(c.lastProvision()?.speculative).toBe('model changed');
    await c.close();
  });

  it('is not used when a node arrived after it: the plan puts pods on that node', async () => {
    const c = engine.cluster('node-after');
    const batch = pending(4, '500m');
    await c.speculate(cluster(batch), batch, { wellKnownLabels });
    const speculative = await c.provision(cluster(batch), batch, { wellKnownLabels });
    expect(c.lastReused()).toBe(true);
    expect(speculative.existing.size).toBe(0);
    const roomy = stateNode({ name: 'joined', allocatable: { cpu: '16', memory: '64Gi', pods: '110' } });
    const atClose = cluster(batch, [roomy]);
    const plan = await c.provision(atClose, batch, { wellKnownLabels });
    expect(c.lastReused()).toBe(false);
    expect(c.lastProvision()?.modelChange?.delta).toMatchObject({ nodes: 1, nodesSample: ['joined'] });
    expect(plan.existing.get('joined')?.length).toBe(4);
    expect(plan.newNodeClaims).toHaveLength(0);
    await c.close();
  });

  it('is not used for other pods or other options, nor after another call changed the model', async () => {
    const c = engine.cluster('other-op');
    const batch = pending(6, '1');
    const s = cluster(batch);
    await c.speculate(s, batch, { wellKnownLabels });
    await c.provision(s, batch.slice(1), { wellKnownLabels });
    expect(c.lastReused()).toBe(false);
    // Without a clock: why, and no times.
    expect(c.lastProvision()).toEqual({ speculative: 'other pods or options' });
    await c.speculate(s, batch, { wellKnownLabels });
    await c.provision(s, batch, { wellKnownLabels, exact: true });
    expect(c.lastReused()).toBe(false);
    await c.speculate(s, batch, { wellKnownLabels });
    await c.preload(pending(2, '1'));
    await c.provision(s, batch, { wellKnownLabels });
    expect(c.lastReused()).toBe(false);
    await c.close();
  });

  it('is not kept when called off (its batch changed): the close solves, and gets the plan a solve makes', async () => {
    const c = engine.cluster('called-off');
    const batch = [...pending(30, '700m'), ...pending(20, '1500m')];
    const s = cluster(batch);
    // Called off before the worker takes it up: the worker applies its delta and solves nothing.
    const ahead = c.speculate(s, batch, { wellKnownLabels });
    c.callOffSpeculation();
    await ahead;
    const plan = await c.provision(cluster(batch, [], 2_000), batch, { wellKnownLabels });
    expect(c.lastReused()).toBe(false);
    expect(c.lastShipped()).toMatchObject({ pods: 0, nodes: 0 });
    expect(normalizePlan(plan)).toEqual(normalizePlan(await engine.provision(s, batch, { wellKnownLabels })));
    // Calling off when no speculative solve is in flight changes nothing: the next one is kept as usual.
    c.callOffSpeculation();
    await c.speculate(s, batch.slice(1), { wellKnownLabels });
    c.callOffSpeculation();
    await c.provision(s, batch.slice(1), { wellKnownLabels });
    expect(c.lastReused()).toBe(true);
    await c.close();
  });

  it('is forgotten with its model (closed, so the next call starts the model over)', async () => {
    const c = engine.cluster('closed');
    const batch = pending(3, '1');
    await c.speculate(cluster(batch), batch, { wellKnownLabels });
    await c.close();
    const again = engine.cluster('closed');
    await again.provision(cluster(batch), batch, { wellKnownLabels });
    expect(again.lastReused()).toBe(false);
    expect(again.lastProvision()?.speculative).toBe('none kept');
    expect(again.lastShipped()?.full).toBe(true);
    await again.close();
  });
});

describe("a speculative solve's call-off flag", () => {
  it("turns the worker's clock past any deadline once the running solve is called off, and only that one", () => {
    const flag = new SpeculationFlag();
    const other = new SpeculationFlag();
    let running: SharedArrayBuffer | undefined = flag.buffer;
    const clock = speculationClock(() => running);
    const safetyNetMs = 20_000;
    const before = clock();
    other.callOff();
    expect(clock() - before).toBeLessThan(safetyNetMs);
    flag.callOff();
    expect(calledOff(flag.buffer)).toBe(true);
    // A deadline set before the call-off, or from a reading after it, is passed at the next reading.
    const deadlineAfter = clock() + safetyNetMs;
    expect(deadlineAfter).toBeGreaterThan(before + safetyNetMs);
    expect(clock()).toBeGreaterThan(deadlineAfter);
    expect(Number.isFinite(clock())).toBe(true);
    running = undefined;
    expect(clock() - before).toBeLessThan(safetyNetMs);
    expect(calledOff(undefined)).toBe(false);
  });
});

describe('when a kept plan may be had (SpeculativePlan)', () => {
  const plan: ProvisionPlan = {
    existing: new Map(),
    newNodeClaims: [],
    unschedulable: [],
    ignored: [],
    costPerHour: 0,
  };
  const op = new Uint8Array([1, 2, 3]);
  const delta = (extra: Partial<SnapshotDelta> = {}): SnapshotDelta => ({ base: 7, version: 8, now: 5, ...extra });

  it('only for the same version, a delta of the clock alone and the same operation', () => {
    const kept = new SpeculativePlan();
    kept.keep(7, op, plan);
    expect(kept.take(7, delta(), new Uint8Array([1, 2, 3]))).toBe(plan);
    expect(kept.take(6, { ...delta(), base: 6 }, op)).toBeUndefined();
    expect(kept.take(7, delta(), new Uint8Array([1, 2, 4]))).toBeUndefined();
    expect(kept.take(7, delta(), new Uint8Array([1, 2]))).toBeUndefined();
    expect(kept.take(7, delta({ pending: ['a'] }), op)).toBeUndefined();
    expect(kept.take(7, delta({ nodesRemoved: ['n'] }), op)).toBeUndefined();
    expect(kept.take(7, delta({ options: DEFAULT_ENGINE_OPTIONS }), op)).toBeUndefined();
    kept.forget();
    expect(kept.take(7, delta(), op)).toBeUndefined();
  });

  it('says why a decision does not have it', () => {
    const kept = new SpeculativePlan();
    expect(kept.whyNot(7, delta(), op)).toBe('none kept');
    kept.keep(7, op, plan);
    expect(kept.whyNot(7, delta(), op)).toBeUndefined();
    expect(kept.whyNot(8, { ...delta(), base: 8 }, op)).toBe('model changed');
    expect(kept.whyNot(7, delta({ podsRemoved: ['p'] }), op)).toBe('model changed');
    expect(kept.whyNot(7, delta(), new Uint8Array([1, 2, 4]))).toBe('other pods or options');
  });

  it('never for a plan the safety net cut short', () => {
    const kept = new SpeculativePlan();
    kept.keep(7, op, { ...plan, truncated: true });
    expect(kept.take(7, delta(), op)).toBeUndefined();
  });
});
