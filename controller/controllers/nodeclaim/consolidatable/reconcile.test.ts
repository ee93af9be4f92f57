// nodeclaim.consolidatable on the in-memory API (test/fakes): Consolidatable follows consolidateAfter from the
// last pod event (or from initialization).
import { describe, expect, it } from 'vitest';
import { toKubeTime } from '../../../operator/clock.ts';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { condition, guide } from '../../../../test/support/environment.ts';
import { newConsolidatable } from './reconcile.ts';

async function env1(pool: string) {
  const env = fakeControllerEnv();
  env.run(newConsolidatable(env.ctx));
  await env.apply(pool);
  launchedNode(env, { name: 'production-a', nodePool: 'production', nodeClass: 'production' });
  await env.settle();
  return {
    env,
    consolidatable: () =>
      condition(env.get('nodeclaims.karpenter.sh', 'production-a'), 'Consolidatable')?.status === 'True',
  };
}

describe('nodeclaim.consolidatable', () => {
  it('is set consolidateAfter (2m in guide-07) after initialization or the last pod event, and cleared by a new one', async () => {
    const { env, consolidatable } = await env1(guide('guide-07.yaml'));
    expect(consolidatable()).toBe(false);
    expect(await env.clock.advanceUntil(consolidatable, 5 * 60_000, 'consolidatable')).toBe(120_000);
    // A pod event (what nodeclaim.podevents stamps) starts the wait again.
    await env.clock.advance(30_000);
    env.api.patchStatus('nodeclaims.karpenter.sh', undefined, 'production-a', {
      lastPodEventTime: toKubeTime(env.clock.now()),
    });
    await env.settle();
    expect(consolidatable()).toBe(false);
    expect(await env.clock.advanceUntil(consolidatable, 5 * 60_000, 'consolidatable again')).toBe(120_000);
  });

  it('is never set when consolidateAfter is Never', async () => {
    const { env, consolidatable } = await env1(
      guide('guide-07.yaml').replace('consolidateAfter: 2m', 'consolidateAfter: Never'),
    );
    await env.clock.advance(30 * 60_000);
    expect(consolidatable()).toBe(false);
    expect(condition(env.get('nodeclaims.karpenter.sh', 'production-a'), 'Consolidatable')).toBeUndefined();
  });
});
