// What happens in a soak, and when: a seeded schedule of workload changes and faults over the simulated
// hours. Each kind arrives as a Poisson process at its rate per simulated hour, so a seed names one
// schedule and a longer run meets proportionally more of everything.
import { Rng } from './rng.ts';

export const WORKLOAD_KINDS = ['scale', 'rollout', 'spot-interruption', 'drift'] as const;
export const FAULT_KINDS = [
  'api-500',
  'api-409',
  'api-429',
  'list-failure',
  'watch-failure',
  'list-failure-at-start',
  'cloud-500',
  'hung-call',
  'lost-launch',
  'controller-kill',
  'leader-failover',
  'ice',
  'partial-fleet',
] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];
export type FaultKind = (typeof FAULT_KINDS)[number];
export type EventKind = WorkloadKind | Exclude<FaultKind, 'list-failure-at-start'>;

/** Arrivals per simulated hour. `list-failure-at-start` is not scheduled: it comes with restarts. */
export const RATES_PER_HOUR: Readonly<Record<EventKind, number>> = {
  scale: 12,
  rollout: 3,
  'spot-interruption': 4,
  drift: 1,
  'api-500': 8,
  'api-409': 6,
  'api-429': 4,
  'list-failure': 4,
  'watch-failure': 4,
  'cloud-500': 6,
  'hung-call': 4,
  'lost-launch': 2,
  'controller-kill': 2,
  'leader-failover': 1,
  ice: 2,
  'partial-fleet': 2,
};

interface ScheduledEvent {
  /** Offset from the start of the soak, ms of simulated time. */
  readonly at: number;
  readonly kind: EventKind;
}

/** The whole run's events in time order. */
export function schedule(seed: number, durationMs: number): ScheduledEvent[] {
  const rng = new Rng(seed);
  const out: ScheduledEvent[] = [];
  for (const kind of Object.keys(RATES_PER_HOUR) as EventKind[]) {
    const meanGapMs = 3_600_000 / RATES_PER_HOUR[kind];
    // The first minutes belong to the cluster coming up.
    for (let t = 5 * 60_000 + exponential(rng, meanGapMs); t < durationMs; t += exponential(rng, meanGapMs))
      out.push({ at: Math.round(t), kind });
  }
  return out.sort((a, b) => a.at - b.at || a.kind.localeCompare(b.kind));
}

function exponential(rng: Rng, mean: number): number {
  return -Math.log(1 - rng.next()) * mean;
}
