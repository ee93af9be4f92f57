// Leader election against the simulated API server (real HTTP, real Lease objects with resourceVersion
// conflicts) on a manual clock: acquiring, renewing, taking over from a crashed or released leader, and a
// leader that cannot renew stepping down before anyone else may take over.
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../sim/apiserver/index.ts';
import { manualClock, type SimClock } from '../../sim/clock.ts';
import { kubeConfigFor } from '../../sim/kubeconfig.ts';
import { Activity } from './activity.ts';
import { KubeClient } from './kube.ts';
import { LEASE_DEFAULTS, LeaderElector } from './leaderelection.ts';
import { newLogger } from './logger.ts';

interface Env {
  clock: SimClock;
  server: ApiServer;
  activity: Activity;
  close(): Promise<void>;
}

let env: Env | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

async function setup(): Promise<Env> {
  const clock = manualClock();
  const server = await startApiServer({ clock });
  const activity = new Activity();
  // Let requests in flight finish between timers, as the simulator's settle does.
  const remove = clock.addSettler(async () => {
    for (let i = 0; activity.busy() && i < 5_000; i++) await new Promise((r) => setTimeout(r, 1));
  });
  return {
    clock,
    server,
    activity,
    close: async () => {
      remove();
      await server.close();
      clock.dispose();
    },
  };
}

interface Replica {
  elector: LeaderElector;
  /** Sim times leadership started / stopped. */
  started: number[];
  stopped: Array<{ at: number; why: string }>;
}

function replica(e: Env, identity: string, random = () => 0.5): Replica {
  const r: Replica = { started: [], stopped: [], elector: undefined as never };
  r.elector = new LeaderElector(
    {
      kube: new KubeClient(kubeConfigFor(e.server), { activity: e.activity }),
      clock: e.clock,
      log: newLogger({ level: 'silent' }),
      random,
      onStartedLeading: () => r.started.push(e.clock.now()),
      onStoppedLeading: (why) => r.stopped.push({ at: e.clock.now(), why }),
    },
    { ...LEASE_DEFAULTS, name: 'karpenter-leader-election', namespace: 'kube-system', identity },
  );
  return r;
}

const lease = (e: Env) =>
  e.server.store.get('leases.coordination.k8s.io', 'kube-system', 'karpenter-leader-election')?.spec as
    | {
        holderIdentity: string;
        leaseDurationSeconds: number;
        renewTime: string;
        acquireTime: string;
        leaseTransitions: number;
      }
    | undefined;

describe('leader election', () => {
  it('acquires a free lease at once and renews it every retry period', async () => {
    env = await setup();
    const t0 = env.clock.now();
    const a = replica(env, 'a');
    a.elector.run();
    await env.clock.advance(0);
    expect(a.started).toEqual([t0]);
    expect(a.elector.isLeader()).toBe(true);
    expect(lease(env)).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    const acquired = lease(env)!.acquireTime;
    await env.clock.advance(10_000);
    expect(Date.parse(lease(env)!.renewTime)).toBe(t0 + 10_000);
    expect(lease(env)!.acquireTime).toBe(acquired);
    a.elector.halt();
  });

  it("a follower takes over a crashed leader's lease once it has not changed for the lease duration, and not before", async () => {
    env = await setup();
    const a = replica(env, 'a');
    const b = replica(env, 'b');
    a.elector.run();
    await env.clock.advance(0);
    b.elector.run();
    await env.clock.advance(20_000);
    expect(b.started).toEqual([]);
    a.elector.halt(); // a crash: the lease is left as it was
    const lastRenew = Date.parse(lease(env)!.renewTime);
    await env.clock.advanceUntil(() => b.started.length > 0, 60_000, 'b leads');
    const took = b.started[0]! - lastRenew;
    // b first saw a's last renewal within one of its (jittered) retry periods, then waited 15 s from then.
    expect(took).toBeGreaterThanOrEqual(15_000);
    expect(took).toBeLessThanOrEqual(15_000 + 2 * 2_000 * 2.2);
    expect(lease(env)).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    b.elector.halt();
  });

  it('a released lease is taken over within a retry period', async () => {
    env = await setup();
    const a = replica(env, 'a');
    const b = replica(env, 'b');
    a.elector.run();
    await env.clock.advance(0);
    b.elector.run();
    await env.clock.advance(5_000);
    const released = a.elector.release();
    await env.clock.advance(0);
    await released;
    expect(lease(env)).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    const at = env.clock.now();
    await env.clock.advanceUntil(() => b.started.length > 0, 10_000, 'b leads');
    expect(b.started[0]! - at).toBeLessThanOrEqual(2_000 * 2.2 + 1_000);
    expect(a.stopped).toEqual([{ at, why: 'stopped' }]);
    b.elector.halt();
  });

  it('a leader that cannot renew steps down within the renew deadline, before the follower may take the lease', async () => {
    env = await setup();
    const a = replica(env, 'a');
    const b = replica(env, 'b');
    a.elector.run();
    await env.clock.advance(0);
    b.elector.run();
    await env.clock.advance(6_000);
    // Every lease write fails for a while (only the leader writes: the follower only reads until it expires).
    env.server.faults.failNext({ resource: 'leases', verbs: ['update'], code: 500, count: 6 });
    const lastRenew = Date.parse(lease(env)!.renewTime);
    await env.clock.advanceUntil(() => b.started.length > 0, 60_000, 'b leads');
    expect(a.stopped).toHaveLength(1);
    expect(a.stopped[0]!.why).toBe('lost');
    expect(a.stopped[0]!.at - lastRenew).toBeLessThanOrEqual(
      LEASE_DEFAULTS.renewDeadlineMs + LEASE_DEFAULTS.retryPeriodMs,
    );
    expect(b.started[0]!).toBeGreaterThanOrEqual(lastRenew + LEASE_DEFAULTS.leaseDurationMs);
    expect(a.stopped[0]!.at).toBeLessThan(b.started[0]!);
    // A replica that lost its lease does not campaign again.
    await env.clock.advance(60_000);
    expect(a.started).toHaveLength(1);
    expect(lease(env)!.holderIdentity).toBe('b');
    b.elector.halt();
  });

  it("of replicas racing for a free lease exactly one wins (the API server refuses the others' writes)", async () => {
    env = await setup();
    const rs = ['a', 'b', 'c'].map((id) => replica(env!, id));
    for (const r of rs) r.elector.run();
    await env.clock.advance(30_000);
    expect(rs.filter((r) => r.started.length > 0)).toHaveLength(1);
    expect(rs.filter((r) => r.elector.isLeader()).map((r) => r.elector.config.identity)).toEqual([
      lease(env)!.holderIdentity,
    ]);
    for (const r of rs) r.elector.halt();
  });
});
