// The orchestration queue on the in-memory API: how a command's candidates are deleted once it may go on.
import { describe, expect, it } from 'vitest';
import type { Command } from '../../../engine/index.ts';
import { fakeControllerEnv } from '../../../test/fakes/controller.ts';
import { launchedNode } from '../../../test/fakes/objects.ts';
import { guide } from '../../../test/support/environment.ts';
import { buildSnapshot } from '../../state/snapshot.ts';
import { newOrchestrationQueue } from './queue.ts';

/** A multi-node delete of `names` (no replacements, no pods moved): what consolidation hands the queue. */
function deleteCommand(candidates: ReadonlyArray<{ name: string; providerID: string }>): Command {
  return {
    kind: 'delete',
    reason: 'Underutilized',
    method: 'multi',
    candidates: candidates.map((c) => ({
      name: `${c.name}-node`,
      nodeClaimName: c.name,
      providerId: c.providerID,
      nodePool: 'production',
      instanceType: 'm5.xlarge',
      capacityType: 'on-demand',
      price: 0.236,
      reschedulablePods: 0,
      disruptionCost: 1,
    })),
    replacements: [],
    savingsPerHour: 0.236 * candidates.length,
    podsMoved: [],
    metricLabels: { decision: 'delete', reason: 'underutilized', consolidation_type: 'multi' },
  };
}

describe('disruption.queue', () => {
  it("deletes every candidate's NodeClaim at once, not one after another", async () => {
    // Karpenter's waitOrTerminate deletes them with workqueue.ParallelizeUntil, one worker per candidate
    // (pkg/controllers/disruption/queue.go). One after another, each delete waits its turn in the client's
    // rate limiter behind every other controller's requests: at 5,000 nodes a 100-node command took most of
    // a minute before its last NodeClaim was even deleted.
    const env = fakeControllerEnv();
    await env.apply(guide('guide-07.yaml'));
    const made = ['a', 'b', 'c', 'd', 'e'].map((n) =>
      launchedNode(env, {
        name: `production-${n}`,
        nodePool: 'production',
        nodeClass: 'production',
        instanceType: 'm5.xlarge',
      }),
    );
    await env.settle();
    const queue = newOrchestrationQueue(env.ctx);
    env.run(queue);

    // Each NodeClaim delete stays in flight for a few turns of the event loop (a request on the wire).
    const kube = env.ctx.kube as { delete: typeof env.ctx.kube.delete };
    const send = kube.delete.bind(env.ctx.kube);
    let inFlight = 0;
    let most = 0;
    const deleted: string[] = [];
    kube.delete = async (kind, name, ...rest) => {
      if (kind !== 'NodeClaim') return send(kind, name, ...rest);
      inFlight++;
      most = Math.max(most, inFlight);
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      inFlight--;
      deleted.push(name);
      return send(kind, name, ...rest);
    };

    const cmd = deleteCommand(made.map((m) => ({ name: m.claim.metadata.name!, providerID: m.providerID })));
    // The queue reads the snapshot's nodes only for the moved pods' destinations (none here).
    await queue.start(cmd, await buildSnapshot(env.ctx, env.clock.now(), env.ctx.engineOptions));
    await env.settle();

    expect(deleted.sort()).toEqual(made.map((m) => m.claim.metadata.name!).sort());
    expect(most).toBe(made.length);
    expect(queue.commands()).toEqual([]);
    for (const m of made)
      expect(env.get('nodeclaims.karpenter.sh', m.claim.metadata.name!).metadata.deletionTimestamp).toBeDefined();
  });
});
