// Failure drill: the API server answers writes with 409 Conflict and 500 Internal Server Error (faults
// injected into the simulated API server's HTTP front). Every failed write is retried, and none of the
// controller's actions happens twice: one NodeClaim for one batch of pods, one instance for one NodeClaim,
// one eviction per pod, one NodeClaim deletion per interruption.
import { afterEach, describe, expect, it } from 'vitest';
import { leaks, watchDrill } from '../support/drills.ts';
import { deployment, guide, nodeClaims, nodes, running, simulation, type Simulation } from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** Requests the API server answered, by verb/resource/subresource and status class. */
function answered(
  s: Simulation,
  match: { verb: string; resource: string; subresource?: string },
): { ok: string[]; failed: number[] } {
  const rs = s.cluster.server.requests
    .all()
    .filter(
      (r) =>
        r.verb === match.verb &&
        r.resource === match.resource &&
        (match.subresource === undefined || r.subresource === match.subresource),
    );
  return {
    ok: rs.filter((r) => r.status < 300).map((r) => r.name ?? ''),
    failed: rs.filter((r) => r.status >= 400).map((r) => r.status),
  };
}

describe('API server fault drills', () => {
  it('provisions through 500s and 409s on NodeClaim create, status and Node writes: one NodeClaim, one instance', async () => {
    const lines: Array<{ level: string; message: string; controller?: string; error?: string }> = [];
    sim = await simulation({
      logLevel: 'debug',
      logDestination: { write: (line: string) => void lines.push(JSON.parse(line)) },
    });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    const faults = sim.cluster.server.faults;
    faults.failNext({ resource: 'nodeclaims', verbs: ['create'], code: 500, count: 2 });
    faults.failNext({ resource: 'nodeclaims', verbs: ['patch'], subresource: 'status', code: 409, count: 2 });
    faults.failNext({ resource: 'nodeclaims', verbs: ['patch'], subresource: 'status', code: 500, count: 1 });
    faults.failNext({ resource: 'nodes', verbs: ['patch'], code: 409, count: 2 });
    const drill = watchDrill(sim, { maxUnboundMs: 120_000 });
    await sim.apply(deployment('web', 3));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'web running');

    expect(faults.pending()).toBe(0);
    expect(answered(sim, { verb: 'create', resource: 'nodeclaims.karpenter.sh' })).toEqual({
      ok: [''],
      failed: [500, 500],
    });
    // The injected failures came first (a real conflict between the controllers' own writes may follow).
    expect(
      answered(sim, { verb: 'patch', resource: 'nodeclaims.karpenter.sh', subresource: 'status' }).failed.slice(0, 3),
    ).toEqual([409, 409, 500]);
    expect(nodeClaims(sim)).toHaveLength(1);
    expect(sim.provider.all()).toHaveLength(1);
    expect(await sim.operator.metrics.value('karpenter_nodeclaims_created_total')).toBe(1);
    // The conflicts are routine: counted, logged at debug, never at error.
    const conflicts = lines.filter((l) => l.message === 'reconcile hit a conflict; retrying');
    // The four injected (two on the launch's status write, two on the registration's Node patch), and any
    // real race between the controllers' own writes.
    expect(
      conflicts.filter((l) => l.error?.includes('injected fault: 409')).map((l) => [l.level, l.controller]),
    ).toEqual(Array(4).fill(['DEBUG', 'nodeclaim.lifecycle']));
    expect(await sim.operator.metrics.value('karpenter_ts_reconcile_conflicts_total')).toBe(conflicts.length);
    expect(lines.filter((l) => l.level === 'ERROR' && l.error?.includes('409'))).toEqual([]);
    expect(lines.filter((l) => l.level === 'ERROR' && l.error?.includes('injected fault: 500')).length).toBeGreaterThan(
      0,
    );
    expect(drill.violations()).toEqual([]);
    expect(leaks(sim)).toEqual([]);
    drill.stop();
  });

  it('drains through 500s and 409s on the NodeClaim delete, the Node taint and evictions: one eviction per pod, the PDB held', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 3));
    await sim.apply(
      JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace: 'default' },
        spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
      }),
    );
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'web running');
    const [old] = nodeClaims(sim);
    const faults = sim.cluster.server.faults;
    faults.failNext({ resource: 'nodeclaims', verbs: ['delete'], code: 500, count: 1 });
    faults.failNext({ resource: 'nodes', verbs: ['patch'], code: 409, count: 1 });
    faults.failNext({ resource: 'pods', verbs: ['create'], subresource: 'eviction', code: 500, count: 2 });
    faults.failNext({ resource: 'pods', verbs: ['create'], subresource: 'eviction', code: 409, count: 1 });
    const drill = watchDrill(sim, { maxUnboundMs: 90_000 });
    sim.provider.interrupt((old!.status as { providerID: string }).providerID, 'scheduledChange');
    await sim.clock.advanceUntil(
      () =>
        running(sim!, 'web') === 3 &&
        nodes(sim!).length === 1 &&
        nodeClaims(sim!).length === 1 &&
        nodeClaims(sim!)[0]!.metadata.name !== old!.metadata.name,
      180_000,
      'web running on the replacement',
    );

    expect(faults.pending()).toBe(0);
    expect(answered(sim, { verb: 'delete', resource: 'nodeclaims.karpenter.sh' })).toEqual({
      ok: [old!.metadata.name],
      failed: [500],
    });
    const evictions = answered(sim, { verb: 'create', resource: 'pods', subresource: 'eviction' });
    // The injected failures, and the PDB's 429s while the replacement was not ready yet.
    expect(evictions.failed.filter((c) => c !== 429)).toEqual([500, 500, 409]);
    expect(evictions.failed.filter((c) => c === 429).length).toBeGreaterThan(0);
    expect(evictions.ok).toHaveLength(3);
    expect(new Set(evictions.ok).size).toBe(3);
    expect(sim.provider.interruptions.acknowledged).toHaveLength(1);
    expect(
      await sim.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'scheduled_change' }),
    ).toBe(1);
    expect(drill.violations()).toEqual([]);
    await sim.clock.advance(10_000);
    expect(leaks(sim)).toEqual([]);
    drill.stop();
  });
});
