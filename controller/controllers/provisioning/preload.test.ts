// The batch window's work ahead of the decision (PendingPreloader) on a manual clock with a stand-in engine: a
// speculative solve that a triggering change overtakes is called off; one that nothing overtakes is left alone; a
// change that triggers nothing makes the window solve ahead again once the cluster is quiet.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../engine/index.ts';
import { manualClock } from '../../../sim/clock.ts';
import type { Change } from '../../state/changes.ts';
import { PendingPreloader } from './preload.ts';

const podChange = (name: string): Change => ({
  kind: 'Pod',
  type: 'upsert',
  name,
  namespace: 'default',
  obj: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' } },
});

/** A preloader whose speculative solves stay in flight until the test finishes them. */
function harness() {
  const clock = manualClock();
  const state = { deciding: false };
  const solves: Array<() => void> = [];
  const calledOff: number[] = [];
  const preloader = new PendingPreloader({
    clock,
    idleMs: 1_000,
    pod: (namespace, name) => ({ namespace, name, uid: name }) as unknown as Pod,
    preload: () => Promise.resolve(),
    speculate: () => new Promise<void>((resolve) => solves.push(resolve)),
    callOffSpeculation: () => calledOff.push(solves.length),
    ready: () => !state.deciding,
    onError: (err) => {
      throw err;
    },
  });
  return { clock, solves, calledOff, preloader, state };
}

describe('PendingPreloader: the speculative solve', () => {
  it('is called off when a pod arrives while it runs, and the window solves again once quiet', async () => {
    const { clock, solves, calledOff, preloader } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    expect(solves).toHaveLength(1);
    expect(calledOff).toEqual([]);
    preloader.saw(podChange('b'));
    expect(calledOff).toEqual([1]);
    solves[0]!();
    await clock.advance(400);
    expect(solves).toHaveLength(2);
    expect(calledOff).toEqual([1]);
    preloader.stop();
  });

  it('is left alone when nothing changes while it runs', async () => {
    const { clock, solves, calledOff, preloader } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    expect(solves).toHaveLength(1);
    await clock.advance(2_000);
    solves[0]!();
    await clock.advance(400);
    expect(calledOff).toEqual([]);
    expect(solves).toHaveLength(1);
    preloader.stop();
  });

  it('is not called off while a decision runs (the close may be waiting for its plan)', async () => {
    const { clock, solves, calledOff, preloader, state } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    expect(solves).toHaveLength(1);
    state.deciding = true;
    preloader.saw(podChange('b'));
    expect(calledOff).toEqual([]);
    solves[0]!();
    preloader.stop();
  });

  it('is not called off by a change that comes after it finished', async () => {
    const { clock, solves, calledOff, preloader } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    solves[0]!();
    await clock.advance(10);
    preloader.saw(podChange('b'));
    expect(calledOff).toEqual([]);
    preloader.stop();
  });
});

describe('PendingPreloader: a change that triggers nothing but may alter the snapshot', () => {
  it('makes the window solve ahead again once the cluster is quiet, without calling off the solve under way', async () => {
    const { clock, solves, calledOff, preloader } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    expect(solves).toHaveLength(1);
    preloader.changed(true);
    expect(calledOff).toEqual([]);
    solves[0]!();
    await clock.advance(100);
    expect(solves).toHaveLength(1);
    await clock.advance(300);
    expect(solves).toHaveLength(2);
    solves[1]!();
    await clock.advance(2_000);
    expect(solves).toHaveLength(2);
    preloader.stop();
  });

  it('after the solve ahead finished: one more solve for a burst of such changes', async () => {
    const { clock, solves, preloader } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    solves[0]!();
    await clock.advance(10);
    for (let i = 0; i < 20; i++) {
      preloader.changed(true);
      await clock.advance(10);
    }
    await clock.advance(400);
    expect(solves).toHaveLength(2);
    preloader.stop();
  });

  it('a steady stream of them brings no solve (calls coalesce until the cluster is quiet)', async () => {
    const { clock, solves, preloader } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    solves[0]!();
    for (let i = 0; i < 100; i++) {
      preloader.changed(true);
      await clock.advance(50);
    }
    expect(solves).toHaveLength(1);
    await clock.advance(400);
    expect(solves).toHaveLength(2);
    preloader.stop();
  });
});

describe('PendingPreloader.atClose: the solve ahead when the decision has taken its snapshot', () => {
  it('finds none in flight once the solve ahead finished', async () => {
    const { clock, solves, calledOff, preloader } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    solves[0]!();
    await clock.advance(10);
    expect(preloader.atClose()).toBe('none in flight');
    expect(calledOff).toEqual([]);
    preloader.stop();
  });

  it('leaves one in flight that nothing overtook: the decision waits for its plan', async () => {
    const { clock, solves, calledOff, preloader, state } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    expect(solves).toHaveLength(1);
    state.deciding = true;
    preloader.clear();
    expect(preloader.atClose()).toBe('in flight');
    expect(calledOff).toEqual([]);
    solves[0]!();
    preloader.stop();
  });

  it('calls off one that a pod overtook while the decision took its snapshot (it would throw that plan away)', async () => {
    const { clock, solves, calledOff, preloader, state } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    state.deciding = true;
    preloader.clear();
    preloader.saw(podChange('b'));
    expect(calledOff).toEqual([]);
    expect(preloader.atClose()).toBe('called off');
    expect(calledOff).toEqual([1]);
    solves[0]!();
    preloader.stop();
  });

  it('calls off one that a change triggering nothing overtook after the window closed, and solves nothing more', async () => {
    const { clock, solves, calledOff, preloader } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    preloader.changed(false);
    expect(calledOff).toEqual([]);
    expect(preloader.atClose()).toBe('called off');
    expect(calledOff).toEqual([1]);
    solves[0]!();
    await clock.advance(2_000);
    expect(solves).toHaveLength(1);
    preloader.stop();
  });

  it('counts only the changes since the solve in flight began, not those an earlier solve saw', async () => {
    const { clock, solves, calledOff, preloader } = harness();
    preloader.saw(podChange('a'));
    await clock.advance(400);
    preloader.changed(true);
    solves[0]!();
    await clock.advance(400);
    expect(solves).toHaveLength(2);
    expect(preloader.atClose()).toBe('in flight');
    expect(calledOff).toEqual([]);
    solves[1]!();
    preloader.stop();
  });
});
