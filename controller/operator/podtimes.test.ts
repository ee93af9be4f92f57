import { describe, expect, it } from 'vitest';
import { PodTimes, type PodTimeSlot } from './podtimes.ts';

describe('PodTimes', () => {
  const pod = (name: string, uid = `uid-${name}`) => ({ namespace: 'apps', name, uid });
  function fixture(): { times: PodTimes; slots: Map<string, PodTimeSlot & { uid: string }> } {
    const slots = new Map<string, PodTimeSlot & { uid: string }>();
    const times = new PodTimes();
    times.keepIn((ns, name, uid) => {
      const s = slots.get(`${ns}/${name}`);
      return s?.uid === uid ? s : undefined;
    });
    return { times, slots };
  }

  it("keeps each pod's first sighting and first decision in its slot, and times the decision once", () => {
    const { times, slots } = fixture();
    slots.set('apps/a', { uid: 'uid-a', seenAt: undefined, decidedAt: undefined });
    times.seen([pod('a'), pod('gone')], 1_000);
    times.seen([pod('a')], 2_000);
    expect(slots.get('apps/a')).toMatchObject({ seenAt: 1_000, decidedAt: undefined });
    expect(times.decided([pod('a'), pod('gone')], 4_500)).toEqual([3_500]);
    expect(times.decided([pod('a')], 9_000)).toEqual([]);
    expect(slots.get('apps/a')).toMatchObject({ seenAt: 1_000, decidedAt: 4_500 });
  });

  it('leaves alone a slot that is another pod of the same name, and needs a sighting before a decision', () => {
    const { times, slots } = fixture();
    slots.set('apps/a', { uid: 'uid-a', seenAt: undefined, decidedAt: undefined });
    times.seen([pod('a', 'uid-old')], 1_000);
    expect(times.decided([pod('a')], 2_000)).toEqual([]);
    expect(slots.get('apps/a')).toMatchObject({ seenAt: undefined, decidedAt: undefined });
  });

  it('says so when nothing keeps the times', () => {
    expect(() => new PodTimes().seen([pod('a')], 0)).toThrow(/keepIn/);
  });
});
