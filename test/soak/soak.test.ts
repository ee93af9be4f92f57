// The fault soak in the test suite: one short run on a fixed seed (every kind of workload change and fault
// is scheduled in its 45 simulated minutes), which must hold every invariant; and control runs showing
// the monitor does catch what it looks for, so a clean soak means something.
import { afterEach, describe, expect, it } from 'vitest';
import { deployment, guide, running, simulation, type Simulation } from '../support/environment.ts';
import { InvariantMonitor } from './invariants.ts';
import { schedule, RATES_PER_HOUR, type EventKind } from './schedule.ts';
import { formatReport, main, runSoak } from './soak.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const SEED = 5;

describe('fault soak', () => {
  it('a seed names one schedule, and seed 5 meets every scheduled kind within 45 minutes', () => {
    expect(schedule(SEED, 2_700_000)).toEqual(schedule(SEED, 2_700_000));
    expect(schedule(SEED, 2_700_000)).not.toEqual(schedule(SEED + 1, 2_700_000));
    const kinds = new Set(schedule(SEED, 2_700_000).map((e) => e.kind));
    expect([...kinds].sort()).toEqual((Object.keys(RATES_PER_HOUR) as EventKind[]).sort());
  });

  it('45 simulated minutes of churn and faults (seed 5) breaks no invariant and leaks nothing', async () => {
    const r = await runSoak({ hours: 0.75, seed: SEED, quietMinutes: 10 });
    const text = formatReport(r);
    expect(r.error, text).toBeUndefined();
    expect(r.invariants.breaches, text).toEqual([]);
    expect(r.leaks, text).toEqual([]);
    expect(r.passed).toBe(true);
    // The faults were injected, and the invariants checked, for real.
    expect(
      Object.values(r.faults).reduce((a, b) => a + b, 0),
      text,
    ).toBeGreaterThanOrEqual(30);
    expect(r.faults['controller-kill'] + r.faults['leader-failover'], text).toBeGreaterThanOrEqual(2);
    expect(r.cluster.replicasStarted, text).toBeGreaterThanOrEqual(3);
    expect(r.workload.scale, text).toBeGreaterThan(0);
    for (const [name, n] of Object.entries(r.invariants.checks))
      expect(n, `${name} checked\n${text}`).toBeGreaterThan(0);
    expect(text).toMatch(/reproduce: npm run soak -- --hours 0.75 --seed 5/);
  }, 600_000);

  it('refuses bad arguments with exit 2', async () => {
    const err: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => (err.push(s), true)) as typeof process.stderr.write;
    try {
      expect(await main(['--hours', '-1'])).toBe(2);
      expect(await main(['--seed', '1.5'])).toBe(2);
      expect(await main(['--minutes', '3'])).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(err.join('')).toMatch(
      /--hours needs a number >= 0[\s\S]*--seed must be an integer[\s\S]*unknown argument "--minutes"/,
    );
  });
});

/** Creates NodeClaim `name` in `pool`, marks it disrupted for `reason` and deletes it; a finalizer holds it in
 * deletion, as a NodeClaim the disruption controller is draining. */
async function deleteForDisruption(s: Simulation, name: string, pool: string, reason: string): Promise<void> {
  await s.kube.create('NodeClaim', {
    metadata: { name, labels: { 'karpenter.sh/nodepool': pool }, finalizers: ['soak.test/hold'] },
    spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] },
  });
  const lastTransitionTime = new Date(s.clock.now()).toISOString();
  await s.kube.patchStatus('NodeClaim', name, {
    conditions: [{ type: 'DisruptionReason', status: 'True', reason, message: '', lastTransitionTime }],
  });
  await s.kube.delete('NodeClaim', name);
}

describe('the soak monitor (control runs)', () => {
  async function webWithPdb(): Promise<Simulation> {
    const s = await simulation();
    await s.apply(guide('guide-03.yaml'));
    await s.apply(guide('guide-05.yaml'));
    await s.apply(deployment('web', 3));
    await s.apply(
      JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace: 'default' },
        spec: { minAvailable: 3, selector: { matchLabels: { app: 'web' } } },
      }),
    );
    await s.clock.advanceUntil(() => running(s, 'web') === 3, 180_000, 'web running');
    return s;
  }

  it('reports a pod deleted through the API in breach of its PDB, and a termination of a node that still holds pods', async () => {
    sim = await webWithPdb();
    const monitor = new InvariantMonitor(sim, () => 0);
    const [pod, other] = sim.cluster.store
      .list('pods', { namespace: 'default' })
      .filter((p) => p.metadata.labels?.['app'] === 'web');
    // What a controller that skipped the Eviction API would do.
    await sim.kube.delete('Pod', pod!.metadata.name!, { namespace: 'default' });
    const inst = sim.provider.all().find((i) => i.nodeName === (other!.spec as { nodeName: string }).nodeName);
    monitor.beforeTerminate(inst!.instance.providerID, 'control');
    const breaches = monitor.stats().breaches;
    monitor.stop();
    expect(breaches.map((b) => b.invariant)).toEqual(['pdb', 'undrained']);
    expect(breaches[0]!.message).toMatch(
      new RegExp(
        `a pod delete took pod default/${pod!.metadata.name}: PodDisruptionBudget web left with 2 healthy pods, desires 3`,
      ),
    );
    expect(breaches[1]!.message).toMatch(/control terminated .* with \d+ pods not drained: default\/web-/);
  });

  it('reports an instance no NodeClaim records once garbage collection should have taken it, a budget exceeded, and a disruption in a pool with no budget', async () => {
    sim = await simulation({ only: ['nodeclass.status'] });
    await sim.apply(guide('guide-03.yaml'));
    const monitor = new InvariantMonitor(sim, (pool) => (pool === 'default' ? 0 : undefined));
    // An instance nobody records, with no garbage collection running (only the node class controller does).
    await sim.provider.create({
      nodeClaimName: 'never-created',
      nodePoolName: 'default',
      nodeClassName: 'default',
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5.large'] }],
      requests: {},
      labels: {},
      annotations: {},
      taints: [],
      startupTaints: [],
    });
    for (let i = 0; i < 12; i++) {
      await sim.clock.advance(60_000);
      monitor.check();
    }
    // A NodeClaim deleting for disruption in a pool whose budget allows none.
    await deleteForDisruption(sim, 'disrupted', 'default', 'Underutilized');
    // And one in a pool the soak gave no budget: not skipped, reported.
    await deleteForDisruption(sim, 'elsewhere', 'other', 'Drifted');
    const breaches = monitor.stats().breaches;
    monitor.stop();
    expect(breaches.map((b) => b.invariant)).toEqual(['orphan', 'budget', 'budget']);
    expect(breaches[0]!.message).toMatch(/launched for never-created\) has had no NodeClaim for \d+ s/);
    expect(breaches[1]!.message).toBe(
      'NodePool default has 1 NodeClaims deleting for disruption at once; its budget allows 0',
    );
    expect(breaches[2]!.message).toBe(
      'NodePool other has 1 NodeClaims deleting for disruption, and the soak has no budget for it',
    );
  });
});
