// Leader election over a coordination.k8s.io/v1 Lease, with client-go's algorithm and defaults (the one
// controller-runtime runs for Karpenter, lease `karpenter-leader-election`): lease duration 15 s, renew
// deadline 10 s, retry period 2 s (jittered up to x2.2 while acquiring).
//
// - Acquire: every retry period, read the Lease. A holder other than us is respected until the record has
//   not changed for its leaseDurationSeconds, measured on our own clock from when we first saw that record
//   (clocks of different replicas are never compared). Then take it over with a PUT carrying the
//   resourceVersion we read: of two replicas racing, the API server's 409 lets exactly one win.
// - Renew: every retry period. If no renewal succeeds within the renew deadline, stop leading. Since the
//   deadline (10 s, +2 s for the cycle) is shorter than the lease duration (15 s), the old leader has
//   stopped acting before any other replica can take the lease.
// - Release (a clean stop): write the record with no holder and a 1 s duration, so a follower takes over
//   within a retry period instead of waiting out the lease.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { toKubeMicroTime, type Clock } from './clock.ts';
import { isNotFound, type KubeClient, type KubeObject } from './kube.ts';
import type { Logger } from './logger.ts';
import { errText } from './runtime.ts';

export interface LeaderElectionConfig {
  /** The Lease's name (Karpenter: `karpenter-leader-election`). */
  readonly name: string;
  readonly namespace: string;
  /** This replica's holderIdentity (default `<hostname>_<uuid>`, as controller-runtime). */
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

export const LEASE_DEFAULTS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 } as const;
const JITTER = 1.2;

interface ElectorDeps {
  /** A client that is never fenced (the elector writes the Lease whether or not it leads). */
  readonly kube: KubeClient;
  readonly clock: Clock;
  readonly log: Logger;
  readonly onStartedLeading: () => void;
  /** `lost`: the lease could not be renewed in time; `stopped`: release() or halt() was called. */
  readonly onStoppedLeading: (why: 'lost' | 'stopped') => void;
  /** For the jitter (default Math.random). */
  readonly random?: () => number;
}

/** The Lease spec fields leader election reads and writes. */
interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions: number;
}

export const defaultIdentity = (): string => `${hostname()}_${randomUUID()}`;

/** The namespace a pod runs in, from its service account token mount; undefined outside a cluster. */
export function inClusterNamespace(
  file = '/var/run/secrets/kubernetes.io/serviceaccount/namespace',
): string | undefined {
  if (!existsSync(file)) return undefined;
  const ns = readFileSync(file, 'utf8').trim();
  return ns || undefined;
}

export class LeaderElector {
  private leading = false;
  private stopped = false;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();
  /** The last record we read or wrote, as a string, and when (our clock) it last changed. */
  private observed: { key: string; at: number } | undefined;

  constructor(
    private readonly deps: ElectorDeps,
    readonly config: LeaderElectionConfig,
  ) {}

  isLeader(): boolean {
    return this.leading;
  }

  /** Starts campaigning (once). */
  run(): void {
    this.running ??= this.loop();
  }

  /** Stops campaigning and, if leading, hands the lease back (a clean shutdown). */
  async release(): Promise<void> {
    const wasLeading = this.leading;
    this.halt();
    await this.running;
    if (!wasLeading) return;
    try {
      const lease = await this.deps.kube.get('Lease', this.config.name, this.config.namespace);
      const rec = recordOf(lease);
      if (rec.holderIdentity !== this.config.identity) return;
      const now = toKubeMicroTime(this.deps.clock.now());
      await this.write(lease, {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: rec.leaseTransitions,
      });
      this.deps.log.info({ lease: this.leaseName() }, 'released the leader lease');
    } catch (err) {
      this.deps.log.warn(
        { lease: this.leaseName(), err: errText(err) },
        'releasing the leader lease failed; a follower takes over when it expires',
      );
    }
  }

  /** Stops everything without touching the lease (a crash: followers wait for it to expire). */
  halt(): void {
    this.stopped = true;
    this.abort.abort();
    this.stepDown('stopped');
  }

  private leaseName(): string {
    return `${this.config.namespace}/${this.config.name}`;
  }

  private async loop(): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs } = this.config;
    const log = this.deps.log;
    log.info({ lease: this.leaseName(), identity: this.config.identity }, 'attempting to acquire the leader lease');
    while (!this.stopped && !(await this.tryAcquireOrRenew())) {
      if (!(await this.sleep(retryPeriodMs * (1 + (this.deps.random ?? Math.random)() * JITTER)))) return;
    }
    if (this.stopped) return;
    this.leading = true;
    log.info({ lease: this.leaseName(), identity: this.config.identity }, 'acquired the leader lease');
    this.deps.onStartedLeading();
    while (!this.stopped) {
      const deadline = this.deps.clock.now() + renewDeadlineMs;
      let renewed = false;
      while (!this.stopped) {
        renewed = await this.tryAcquireOrRenew(deadline);
        if (renewed || this.deps.clock.now() + retryPeriodMs > deadline) break;
        if (!(await this.sleep(retryPeriodMs))) return;
      }
      if (this.stopped) return;
      if (!renewed) {
        log.error(
          { lease: this.leaseName(), identity: this.config.identity },
          `failed to renew the leader lease within ${renewDeadlineMs / 1000} s; stepping down`,
        );
        this.stepDown('lost');
        return;
      }
      if (!(await this.sleep(retryPeriodMs))) return;
    }
  }

  private stepDown(why: 'lost' | 'stopped'): void {
    if (!this.leading) return;
    this.leading = false;
    if (why === 'lost') this.stopped = true;
    this.deps.onStoppedLeading(why);
  }

  /** Sleeps on the clock; false when stopped meanwhile. */
  private async sleep(ms: number): Promise<boolean> {
    try {
      await this.deps.clock.sleep(ms, this.abort.signal);
      return !this.stopped;
    } catch {
      return false;
    }
  }

  /** One attempt (client-go's tryAcquireOrRenew); a request still running at `deadline` counts as failed. */
  private async tryAcquireOrRenew(deadline?: number): Promise<boolean> {
    const left = deadline === undefined ? Infinity : deadline - this.deps.clock.now();
    if (left <= 0) return false;
    const attempt = this.attempt().catch((err: unknown) => {
      this.deps.log.debug({ lease: this.leaseName(), err: errText(err) }, 'leader lease request failed');
      return false;
    });
    if (left === Infinity) return attempt;
    let timer: { cancel(): void } | undefined;
    const expired = new Promise<boolean>((resolve) => {
      timer = this.deps.clock.setTimer(left, () => resolve(false));
    });
    const ok = await Promise.race([attempt, expired]);
    timer?.cancel();
    return ok;
  }

  private async attempt(): Promise<boolean> {
    const { name, namespace, identity, leaseDurationMs } = this.config;
    const now = this.deps.clock.now();
    const mine = (prior?: LeaseRecord): LeaseRecord => ({
      holderIdentity: identity,
      leaseDurationSeconds: Math.round(leaseDurationMs / 1000),
      acquireTime:
        prior && prior.holderIdentity === identity && prior.acquireTime ? prior.acquireTime : toKubeMicroTime(now),
      renewTime: toKubeMicroTime(now),
      leaseTransitions: prior
        ? prior.holderIdentity === identity
          ? prior.leaseTransitions
          : prior.leaseTransitions + 1
        : 0,
    });
    let lease: KubeObject;
    try {
      lease = await this.deps.kube.get('Lease', name, namespace);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const rec = mine();
      await this.deps.kube.create('Lease', { metadata: { name, namespace }, spec: { ...rec } });
      this.observe(rec);
      return true;
    }
    const rec = recordOf(lease);
    this.observe(rec);
    const held = rec.holderIdentity !== '' && rec.holderIdentity !== identity;
    if (held && this.observed!.at + rec.leaseDurationSeconds * 1000 > this.deps.clock.now()) return false;
    const next = mine(rec);
    await this.write(lease, next);
    this.observe(next);
    return true;
  }

  private async write(lease: KubeObject, rec: LeaseRecord): Promise<void> {
    const { acquireTime, renewTime, ...rest } = rec;
    await this.deps.kube.replace('Lease', {
      metadata: {
        name: this.config.name,
        namespace: this.config.namespace,
        ...(lease.metadata.resourceVersion ? { resourceVersion: lease.metadata.resourceVersion } : {}),
      },
      spec: {
        ...(lease.spec ?? {}),
        ...rest,
        ...(acquireTime ? { acquireTime } : {}),
        ...(renewTime ? { renewTime } : {}),
      },
    });
  }

  private observe(rec: LeaseRecord): void {
    const key = JSON.stringify(rec);
    if (this.observed?.key !== key) this.observed = { key, at: this.deps.clock.now() };
  }
}

function recordOf(lease: KubeObject): LeaseRecord {
  const s = (lease.spec ?? {}) as Record<string, unknown>;
  return {
    holderIdentity: typeof s['holderIdentity'] === 'string' ? s['holderIdentity'] : '',
    leaseDurationSeconds: typeof s['leaseDurationSeconds'] === 'number' ? s['leaseDurationSeconds'] : 0,
    ...(typeof s['acquireTime'] === 'string' ? { acquireTime: s['acquireTime'] } : {}),
    ...(typeof s['renewTime'] === 'string' ? { renewTime: s['renewTime'] } : {}),
    leaseTransitions: typeof s['leaseTransitions'] === 'number' ? s['leaseTransitions'] : 0,
  };
}
