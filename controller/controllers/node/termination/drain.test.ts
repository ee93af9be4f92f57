import { describe, expect, it } from 'vitest';
import { pod } from '../../../../test/fixtures/builders.ts';
import { doNotDisrupt, evictionTier, forceDeletions, waitingPods } from './drain.ts';

const now = Date.UTC(2025, 0, 1, 1);
const ds = { kind: 'DaemonSet', name: 'agent' } as const;

describe('drain', () => {
  it('waits for every pod except finished, mirror, disrupted-tolerating and long-stuck terminating ones', () => {
    const pods = [
      pod({ name: 'app' }),
      pod({ name: 'done', phase: 'Succeeded' }),
      pod({ name: 'mirror', owner: { kind: 'Node', name: 'n' } }),
      pod({ name: 'tolerant', tolerations: [{ key: 'karpenter.sh/disrupted', operator: 'Exists' }] }),
      pod({ name: 'stuck', deletionTimestamp: now - 61_000 }),
      pod({ name: 'leaving', deletionTimestamp: now - 10_000 }),
    ];
    expect(waitingPods(pods, now).map((p) => p.name)).toEqual(['app', 'leaving']);
  });

  it('evicts in tiers: non-critical, non-critical DaemonSet, critical, critical DaemonSet', () => {
    const critical = (p: ReturnType<typeof pod>) => ({ ...p, priorityClassName: 'system-node-critical' });
    const all = [
      critical(pod({ name: 'crit-ds', owner: ds })),
      critical(pod({ name: 'crit' })),
      pod({ name: 'ds', owner: ds }),
      pod({ name: 'app' }),
    ];
    expect(evictionTier(all).map((p) => p.name)).toEqual(['app']);
    expect(evictionTier(all.slice(0, 3)).map((p) => p.name)).toEqual(['ds']);
    expect(evictionTier(all.slice(0, 2)).map((p) => p.name)).toEqual(['crit']);
    expect(evictionTier(all.slice(0, 1)).map((p) => p.name)).toEqual(['crit-ds']);
    expect(evictionTier([pod({ name: 'gone', deletionTimestamp: now })])).toEqual([]);
  });

  it('force-deletes pods whose grace period would run past the termination deadline', () => {
    const deadline = now + 60_000;
    const pods = [
      pod({ name: 'short', terminationGracePeriodSeconds: 30 }),
      pod({ name: 'long', terminationGracePeriodSeconds: 120 }),
      pod({ name: 'late', deletionTimestamp: deadline + 1 }),
    ];
    expect(forceDeletions(pods, deadline, now).map((p) => p.name)).toEqual(['long', 'late']);
    expect(forceDeletions(pods, undefined, now)).toEqual([]);
  });

  it('honours karpenter.sh/do-not-disrupt as "true" or as a duration since the pod started', () => {
    expect(doNotDisrupt(pod({ annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }), now)).toBe(true);
    expect(doNotDisrupt(pod({ annotations: { 'karpenter.sh/do-not-disrupt': 'false' } }), now)).toBe(false);
    expect(
      doNotDisrupt(pod({ annotations: { 'karpenter.sh/do-not-disrupt': '10m' }, startTime: now - 5 * 60_000 }), now),
    ).toBe(true);
    expect(
      doNotDisrupt(pod({ annotations: { 'karpenter.sh/do-not-disrupt': '10m' }, startTime: now - 11 * 60_000 }), now),
    ).toBe(false);
  });
});
