// What a disruption pass publishes about the nodes it leaves alone: Karpenter's dedupe of DisruptionBlocked and
// Unconsolidatable on the object alone (pkg/controllers/disruption/events/events.go, v1.14), so a node whose reason
// changes from pass to pass is not told again within the timeout.
import { describe, expect, it, vi } from 'vitest';
import { INITIAL_LOOP_STATE, type DisruptResult, type Explanation, type Snapshot } from '../../../engine/index.ts';
import { fakeControllerEnv, type FakeControllerEnv } from '../../../test/fakes/controller.ts';
import { launchedNode } from '../../../test/fakes/objects.ts';
import { guide } from '../../../test/support/environment.ts';
import { buildSnapshot } from '../../state/snapshot.ts';
import { publishPass } from './report.ts';

/** A pass that disrupts nothing and says why of one node. */
function passWith(node: string, event: NonNullable<Explanation['event']>): DisruptResult {
  return {
    decision: {
      kind: 'noop',
      explanations: [{ node, code: 'not-initialized', message: event.message, data: {}, event }],
    },
    state: INITIAL_LOOP_STATE,
    metrics: { eligibleNodes: {}, allowedDisruptions: [], timeouts: {} },
  };
}

async function oneNode(): Promise<{ env: FakeControllerEnv; node: string; snapshot: () => Promise<Snapshot> }> {
  const env = fakeControllerEnv();
  await env.apply(guide('guide-07.yaml'));
  const { node } = launchedNode(env, { name: 'production-a', nodePool: 'production', nodeClass: 'production' });
  await env.settle();
  return {
    env,
    node: node.metadata.name!,
    snapshot: () => buildSnapshot(env.ctx, env.clock.now(), env.ctx.engineOptions),
  };
}

const published = (env: FakeControllerEnv, reason: string) =>
  env.ctx.events.recent({ reason }).map((e) => `${e.involved.kind}: ${e.message}`);

describe('disruption pass events', () => {
  it('publishes DisruptionBlocked once per Node and NodeClaim per 2 min, whatever the message', async () => {
    const { env, node, snapshot } = await oneNode();
    const first = passWith(node, { reason: 'DisruptionBlocked', message: "Node isn't initialized" });
    // Nothing held back: the loop may go quiet.
    expect(await publishPass(env.ctx, await snapshot(), first)).toBe(false);
    expect(await publishPass(env.ctx, await snapshot(), first)).toBe(false);
    await env.clock.advance(30_000);
    // A new reason held back by the dedupe: the loop must look again.
    expect(
      await publishPass(
        env.ctx,
        await snapshot(),
        passWith(node, { reason: 'DisruptionBlocked', message: 'Node is nominated for a pending pod' }),
      ),
    ).toBe(true);
    expect(published(env, 'DisruptionBlocked').sort()).toEqual([
      "Node: Node isn't initialized",
      "NodeClaim: Node isn't initialized",
    ]);
    await env.clock.advance(2 * 60_000);
    await publishPass(
      env.ctx,
      await snapshot(),
      passWith(node, { reason: 'DisruptionBlocked', message: 'Node is nominated for a pending pod' }),
    );
    expect(published(env, 'DisruptionBlocked')).toHaveLength(4);
    expect(published(env, 'DisruptionBlocked').slice(2).sort()).toEqual([
      'Node: Node is nominated for a pending pod',
      'NodeClaim: Node is nominated for a pending pod',
    ]);
  });

  it('publishes Unconsolidatable once per Node and NodeClaim per 15 min, whatever the message', async () => {
    const { env, node, snapshot } = await oneNode();
    const pass = (message: string) => passWith(node, { reason: 'Unconsolidatable', message });
    await publishPass(env.ctx, await snapshot(), pass('NodePool "production" has consolidation disabled'));
    for (let i = 0; i < 8; i++) {
      await env.clock.advance(60_000);
      await publishPass(
        env.ctx,
        await snapshot(),
        pass(i % 2 ? "Can't replace with a cheaper node" : 'Filtering by price'),
      );
    }
    expect(published(env, 'Unconsolidatable')).toHaveLength(2);
    await env.clock.advance(15 * 60_000);
    await publishPass(env.ctx, await snapshot(), pass("Can't replace with a cheaper node"));
    expect(published(env, 'Unconsolidatable').slice(2).sort()).toEqual([
      "Node: Can't replace with a cheaper node",
      "NodeClaim: Can't replace with a cheaper node",
    ]);
  });

  it("publishes a large pass's explanations a bounded number per turn of the event loop", async () => {
    const { env, node, snapshot } = await oneNode();
    const one = passWith(node, { reason: 'DisruptionBlocked', message: "Node isn't initialized" });
    const many: DisruptResult = {
      ...one,
      decision: { kind: 'noop', explanations: Array.from({ length: 1_200 }, () => one.decision.explanations[0]!) },
    };
    const publishAll = vi.spyOn(env.ctx.events, 'publishAll');
    const done = publishPass(env.ctx, await snapshot(), many);
    // The first chunk in the caller's turn, the rest in later turns.
    expect(publishAll).toHaveBeenCalledTimes(500);
    await done;
    expect(publishAll).toHaveBeenCalledTimes(1_200);
    expect(published(env, 'DisruptionBlocked')).toHaveLength(2);
  });
});
