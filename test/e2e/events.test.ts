// Events Karpenter emits, with its reasons and texts, on the simulator: the status-condition transitions
// operatorpkg publishes, and FailedConsistencyCheck when a Node comes up smaller than its NodeClaim said.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deployment,
  events,
  guide,
  nodeClaims,
  nodes,
  running,
  simulation,
  type Simulation,
} from '../support/environment.ts';

describe("events with Karpenter's reasons and texts", () => {
  let sim: Simulation;

  beforeAll(async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 2));
    await sim.clock.advanceUntil(() => running(sim, 'web') === 2, 180_000, 'web running');
  }, 60_000);

  afterAll(async () => {
    await sim?.close();
  });

  it('publishes status condition transitions on NodeClaims as operatorpkg does', async () => {
    await sim.clock.advance(15_000);
    const claim = nodeClaims(sim)[0]!.metadata.name;
    const initialized = events(sim, 'Initialized').filter(
      (e) => (e['involvedObject'] as { name?: string }).name === claim,
    );
    expect(initialized.map((e) => e['message'])).toContain(
      'Status condition transitioned, Type: Initialized, Status: Unknown -> True, Reason: Initialized',
    );
    expect(initialized[0]!['type']).toBe('Normal');
  });

  it('reports a Node smaller than its NodeClaim expected as FailedConsistencyCheck, and sets ConsistentStateFound=False', async () => {
    const node = nodes(sim)[0]!;
    const capacity = (node.status as { capacity: Record<string, string> }).capacity;
    const claim = nodeClaims(sim)[0]!;
    const expected = (claim.status as { capacity: Record<string, string> }).capacity['memory'];
    sim.cluster.api.patchStatus('nodes', undefined, node.metadata.name!, { capacity: { ...capacity, memory: '1Gi' } });
    await sim.clock.advance(11 * 60_000);
    const failed = events(sim, 'FailedConsistencyCheck');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]!['type']).toBe('Warning');
    expect(String(failed[0]!['message'])).toMatch(
      new RegExp(`^expected ${expected} of resource memory, but found 1Gi \\(\\d+\\.\\d% of expected\\)$`),
    );
    const cond = (
      sim.cluster.store.list('nodeclaims.karpenter.sh')[0]!.status as {
        conditions: Array<{ type: string; status: string; reason: string }>;
      }
    ).conditions.find((c) => c.type === 'ConsistentStateFound');
    expect(cond).toMatchObject({ status: 'False', reason: 'ConsistencyCheckFailed' });
  });
});
