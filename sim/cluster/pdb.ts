// The disruption controller's status half: keeps every PodDisruptionBudget's status (currentHealthy,
// desiredHealthy, disruptionsAllowed, expectedPods, disruptedPods) current as pods, budgets and their
// controllers change. The arithmetic is shared with the eviction subresource (apiserver/pdb.ts).
import type { Clock, Timer } from '../../controller/operator/clock.ts';
import { computePdbStatus, type Api } from '../apiserver/index.ts';
import { DISRUPTED_POD_TIMEOUT_MS } from '../apiserver/pdb.ts';
import { Reactor } from './reactor.ts';
import { writeStatus } from './workload.ts';

const WATCHED = new Set([
  'poddisruptionbudgets.policy',
  'pods',
  'replicasets.apps',
  'deployments.apps',
  'statefulsets.apps',
]);

export class DisruptionController {
  readonly reactor: Reactor;
  private expiry: Timer | undefined;

  constructor(
    private readonly api: Api,
    private readonly clock: Clock,
    onError: (err: unknown) => void,
  ) {
    this.reactor = new Reactor('disruption', () => this.pass(), onError).kickOn(api.store, WATCHED);
    this.reactor.kick();
  }

  close(): void {
    this.reactor.close();
    this.expiry?.cancel();
  }

  private pass(): void {
    const now = this.clock.now();
    let earliest = Infinity;
    for (const pdb of this.api.store.list('poddisruptionbudgets.policy')) {
      const status = computePdbStatus(this.api.store, pdb, now);
      writeStatus(this.api, 'poddisruptionbudgets.policy', pdb, status as unknown as Record<string, unknown>);
      for (const at of Object.values(status.disruptedPods ?? {}))
        earliest = Math.min(earliest, Date.parse(at) + DISRUPTED_POD_TIMEOUT_MS);
    }
    // An evicted pod that is never deleted counts as healthy again after the timeout: recompute then.
    this.expiry?.cancel();
    this.expiry = Number.isFinite(earliest)
      ? this.clock.setTimer(Math.max(1, earliest - now + 1), () => this.reactor.kick())
      : undefined;
  }
}
