// The controller benchmark's harness at a tiny scale: the controller in its own process provisions for the
// benchmark's pods against the simulator, the binder binds them, and the child reports what it measured.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MALLOC_ADDON } from '../../controller/operator/malloc.ts';
import { startHarness, waitFor } from './harness.ts';
import type { ObservedEvents } from '../../sim/remote/protocol.ts';
import { decisionAfter, planAfter, speculativeAfter, speculativeCounts } from './scenarios.ts';
import { createPendingPods, guideNodeClass, SMALL, uniformNodePool } from './workload.ts';

const events = (windowsClosed: number[], nodeClaimsAdded: number[]): ObservedEvents => ({
  windowsClosed,
  nodeClaimsAdded: nodeClaimsAdded.map((at, i) => ({ at, name: `nc-${i}` })),
  decisions: [],
  disruptionPasses: [],
});

/**
 * Whether the controller trims here: `npm run build:native` built the malloc addon (it needs a C compiler and Node's
 * headers) and the C library is glibc (Node's report names its version only there).
 */
const mallocBuilt =
  existsSync(MALLOC_ADDON) &&
  Boolean((process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);

describe('decisionAfter', () => {
  it('measures from the last window that closed before the first NodeClaim of the burst', () => {
    expect(decisionAfter(events([100, 1_100, 2_300], [2_450, 2_500]), 1_000)).toBe(150);
    expect(decisionAfter(events([100], [50, 2_000]), 1_000)).toBeUndefined();
    expect(decisionAfter(events([1_200], []), 1_000)).toBeUndefined();
  });
});

describe('speculativeAfter and speculativeCounts', () => {
  const seen = (decisions: Array<[number, string]>): ObservedEvents => ({
    ...events([1_100], [1_150, 2_450]),
    decisions: decisions.map(([at, speculative]) => ({ at, speculative })),
  });

  it("a burst's outcome is the last decision between its start and its first NodeClaim", () => {
    const e = seen([
      [900, 'taken'],
      [1_120, 'model changed'],
      [1_140, 'taken'],
      [2_400, 'none kept'],
    ]);
    expect(speculativeAfter(e, 1_000)).toBe('taken');
    expect(speculativeAfter(e, 2_000)).toBe('none kept');
    expect(speculativeAfter(e, 3_000)).toBeUndefined();
  });

  it('counts the decisions taken, and the others by why', () => {
    expect(
      speculativeCounts(
        seen([
          [1, 'taken'],
          [2, 'model changed'],
          [3, 'taken'],
          [4, 'model changed'],
          [5, 'none kept'],
        ]),
      ),
    ).toEqual({ taken: 2, notTaken: { 'model changed': 2, 'none kept': 1 }, ahead: {}, queuedMs: [] });
  });

  it("counts what the decisions found of the solve ahead at the close, and lists each one's queue wait", () => {
    const e: ObservedEvents = {
      ...events([1_100], [1_150]),
      decisions: [
        { at: 1, speculative: 'taken', ahead: 'in flight', queuedMs: 240.4 },
        { at: 2, speculative: 'model changed', ahead: 'called off', queuedMs: 3.6 },
        { at: 1_120, speculative: 'taken', ahead: 'in flight', queuedMs: 80.2 },
      ],
    };
    expect(speculativeCounts(e)).toEqual({
      taken: 2,
      notTaken: { 'model changed': 1 },
      ahead: { 'in flight': 2, 'called off': 1 },
      queuedMs: [240, 4, 80],
    });
    expect(planAfter(e, 1_000)).toBe('taken, queued 80 ms, solve ahead at the close: in flight');
    expect(planAfter(e, 2_000)).toBe('?');
  });
});

describe('controller bench harness', () => {
  it('runs the controller in a child process: two nodes for 40 pods, a decision, event-loop and memory figures', async () => {
    const h = await startHarness({ launchMs: 0 });
    try {
      h.cluster.api.create('ec2nodeclasses.karpenter.k8s.aws', undefined, guideNodeClass());
      h.cluster.api.create('nodepools.karpenter.sh', undefined, uniformNodePool());
      const ready = (r: string, n: string) =>
        (
          (
            h.cluster.api.find(r, undefined, n)?.status as
              | { conditions?: Array<{ type: string; status: string }> }
              | undefined
          )?.conditions ?? []
        ).some((c) => c.type === 'Ready' && c.status === 'True');
      await waitFor(
        'the pools to be Ready',
        () => ready('ec2nodeclasses.karpenter.k8s.aws', 'default') && ready('nodepools.karpenter.sh', 'uniform'),
        60_000,
      );
      await h.request('phase-start');
      const since = performance.timeOrigin + performance.now();
      await createPendingPods(
        h.cluster.api,
        Array.from({ length: 40 }, (_, i) => ({ name: `p-${i}`, shape: SMALL, app: 'small' })),
      );
      const running = () => h.list('pods').filter((p) => (p.status as { phase?: string }).phase === 'Running').length;
      await waitFor('40 pods running', () => running() === 40, 120_000);
      const stats = await h.request('phase-end');
      expect(h.list('nodes')).toHaveLength(2);
      expect(
        h.list('nodes').every((n) => n.metadata.labels?.['node.kubernetes.io/instance-type'] === 'm5.2xlarge'),
      ).toBe(true);
      const decision = decisionAfter(await h.request('events'), since);
      expect(decision).toBeGreaterThan(0);
      expect(stats.eventLoopP99Ms).toBeGreaterThan(0);
      expect(stats.eventLoopMaxMs).toBeGreaterThanOrEqual(stats.eventLoopP99Ms);
      expect(stats.rssPeakMiB).toBeGreaterThan(50);
      // CPU_REQUESTS left at its default (1,000 millicores): one engine worker (operator/reconciles.ts).
      expect(stats.workers).toHaveLength(1);
      // The peak is the larger of the start and every 5 s window's highest sample; every window was sampled.
      expect(stats.rssStartMiB).toBeGreaterThan(50);
      expect(stats.rssWindowsMiB.length).toBeGreaterThanOrEqual(1);
      expect(stats.rssWindowsMiB.length).toBeLessThanOrEqual(Math.floor(stats.seconds / 5) + 2);
      expect(stats.rssWindowsMiB.every((w) => w > 0)).toBe(true);
      expect(stats.rssPeakMiB).toBeCloseTo(Math.max(stats.rssStartMiB, ...stats.rssWindowsMiB), -1);
      // The main heap by space, at both ends: the new and old spaces hold pages; they add up to no more than the heap.
      for (const spaces of [stats.spacesStartMiB, stats.spacesEndMiB]) {
        expect(spaces['new']).toBeGreaterThan(0);
        expect(spaces['old']).toBeGreaterThan(0);
      }
      const spaced = Object.values(stats.spacesEndMiB).reduce((a, b) => a + b, 0);
      expect(spaced).toBeLessThanOrEqual(stats.heapPhysicalMiB + 0.01);
      if (process.platform === 'linux') {
        expect(stats.rssAnonMiB).toBeGreaterThan(0);
        expect(stats.rssFileMiB).toBeGreaterThan(0);
        // Read a moment after the RSS: allow for what the process allocated in between.
        expect(stats.rssAnonMiB! + stats.rssFileMiB!).toBeLessThanOrEqual(stats.rssEndMiB + 16);
      }
    } finally {
      await h.close();
    }
  });

  it('gives the controller an engine worker a requested core, at most two', async () => {
    for (const [cpu, workers] of [
      ['1500', 2],
      ['4000', 2],
    ] as const) {
      const h = await startHarness({ launchMs: 0, options: { 'cpu-requests': cpu } });
      try {
        await h.request('phase-start');
        expect((await h.request('phase-end')).workers, `CPU_REQUESTS=${cpu}`).toHaveLength(workers);
      } finally {
        await h.close();
      }
    }
  });

  it.skipIf(!mallocBuilt)('trims malloc on the interval the options give, and not at all at 0s', async () => {
    for (const [interval, least] of [
      ['200ms', 3],
      ['0s', 0],
    ] as const) {
      const h = await startHarness({ launchMs: 0, options: { 'malloc-trim-interval': interval } });
      try {
        await h.request('phase-start');
        await new Promise((r) => setTimeout(r, 1_100));
        const { mallocTrims } = await h.request('phase-end');
        if (least === 0) expect(mallocTrims, interval).toEqual({ count: 0, totalMs: 0 });
        else {
          expect(mallocTrims!.count, interval).toBeGreaterThanOrEqual(least);
          expect(mallocTrims!.totalMs, interval).toBeGreaterThan(0);
          // Each trim fits a bucket of karpenter_ts_malloc_trim_duration_seconds, the least of which is 0.5 ms.
          expect(mallocTrims!.atMostMs, interval).toBeGreaterThanOrEqual(0.5);
          expect(mallocTrims!.atMostMs! * mallocTrims!.count, interval).toBeGreaterThanOrEqual(mallocTrims!.totalMs);
        }
      } finally {
        await h.close();
      }
    }
  });
});
