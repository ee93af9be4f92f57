// Reconciles at once scaled with CPU_REQUESTS, and the controllers that take it (operator/reconciles.ts).
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv } from '../../test/fakes/controller.ts';
import { newNodeTermination } from '../controllers/node/termination/reconcile.ts';
import { newNodeClaimLifecycle } from '../controllers/nodeclaim/lifecycle/reconcile.ts';
import {
  cpuCount,
  engineWorkers,
  linearScaleReconciles,
  NODE_TERMINATION_RECONCILES,
  NODECLAIM_LIFECYCLE_RECONCILES,
} from './reconciles.ts';

describe('linearScaleReconciles', () => {
  const lifecycle = (cores: number) => linearScaleReconciles(cores, NODECLAIM_LIFECYCLE_RECONCILES);
  const termination = (cores: number) => linearScaleReconciles(cores, NODE_TERMINATION_RECONCILES);

  it('is the minimum at 1 core or less and the maximum from 60 cores on', () => {
    expect([lifecycle(0.25), lifecycle(1), lifecycle(60), lifecycle(96)]).toEqual([1000, 1000, 5000, 5000]);
    expect([termination(0.5), termination(1), termination(60), termination(200)]).toEqual([100, 100, 5000, 5000]);
  });

  it('grows on the line between, by whole cores, rounded down', () => {
    // (5000 - 1000) / 59 = 67.8 a core; (5000 - 100) / 59 = 83.05 a core.
    expect([lifecycle(2), lifecycle(1.5), lifecycle(8), lifecycle(59)]).toEqual([1067, 1067, 1474, 4932]);
    expect([termination(2), termination(8), termination(30)]).toEqual([183, 681, 2508]);
  });

  it('reads CPU_REQUESTS as millicores, 0 or less as the default 1000', () => {
    expect([cpuCount(2000), cpuCount(500), cpuCount(0), cpuCount(-3)]).toEqual([2, 0.5, 1, 1]);
  });
});

describe('controllers scaled with CPU_REQUESTS', () => {
  it("nodeclaim.lifecycle and node.termination take theirs from the controller's options", () => {
    const at = (cpu?: string) => {
      const env = fakeControllerEnv(cpu ? { options: { 'cpu-requests': cpu } } : {});
      return [newNodeClaimLifecycle(env.ctx).concurrency, newNodeTermination(env.ctx).concurrency];
    };
    expect(at()).toEqual([1000, 100]);
    expect(at('2000')).toEqual([1067, 183]);
    expect(at('8000')).toEqual([1474, 681]);
  });
});

describe('engineWorkers', () => {
  it('is a worker a requested core, counted whole, at least 1 and at most 2', () => {
    expect([0.25, 0.5, 1, 1.001, 1.5, 2, 3, 64].map(engineWorkers)).toEqual([1, 1, 1, 2, 2, 2, 2, 2]);
    expect(engineWorkers(cpuCount(0))).toBe(1);
  });
});
