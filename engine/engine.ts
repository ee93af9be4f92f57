// The Engine: the engine's decisions on a worker pool. The controller, the what-if command, the simulator and
// the benchmarks create one and close it when done; nothing outside the engine decides in its own thread.
//
// A ClusterEngine (engine.cluster(name)) is a warm model of one cluster on one worker: each call ships what
// changed since the model's last version (ModelMirror) and the worker applies it before it decides, so
// objects that did not change are neither sent nor worked out again. Calls on a cluster run one at a time,
// in order. A call that fails (a worker crash, a timeout) drops the model; the next call rebuilds it from
// that call's snapshot. The Engine's own methods are one-off: a fresh model per call, sent in full.
import type { LowerBound } from './bound/index.ts';
import { ModelMirror, type DeltaStats, type PodRefs, type SnapshotDelta } from './cluster/delta.ts';
import { clockOnly, deltaContents, SpeculationFlag, SpeculativePlan, type NotTaken } from './cluster/speculation.ts';
import type { EngineOp, WireDisruptOptions, WireProvisionOptions } from './cluster/ops.ts';
import { applyCommands } from './disruption/apply.ts';
import type { NodeReport } from './disruption/explain.ts';
import type { Command, Decision, DisruptOptions, DisruptResult } from './disruption/types.ts';
import type { ValidationResult } from './disruption/types.ts';
import { disruptTimeoutMs } from './cluster/call-timeout.ts';
import { fromWire, type WireDisruptResult } from './cluster/wire-decision.ts';
import type { Pod, Snapshot } from './domain/types.ts';
import type { NewNodeClaimPlan, ProvisionPlan } from './model/types.ts';
import { TypeShipper, type TypeChunk } from './pool/catalogs.ts';
import { pack } from './pool/codec.ts';
import type { TaskReply } from './pool/engine.worker.ts';
import { MissingPackageError } from './pool/missing-package.ts';
import { EnginePool, PoolError, type PoolOptions } from './pool/pool.ts';
import { WhatIfError } from './whatif/build.ts';
import type { WhatIfJob, WhatIfPart, WhatIfPartResult } from './whatif/job.ts';
import { whatIfWork } from './whatif/work.ts';
import { withBound, type ReportBound, type UnboundReport } from './whatif/bounded.ts';
import type { WhatIfReport } from './whatif/types.ts';

interface EngineConfig extends PoolOptions {
  /** Per-call timeout, ms (default 60 s, Karpenter's solve timeout). */
  readonly timeoutMs?: number;
}

/** Disruption options as the Engine takes them: deadlines in the worker's wall time instead of a clock. */
export type EngineDisruptOptions = Omit<DisruptOptions, 'solver' | 'repackSolver' | 'caches' | 'elapsedMs'> & {
  /** Karpenter's method timeouts and the repack's deadline count wall time (the controller); default: none. */
  readonly deadlines?: boolean;
};

interface EngineCallOptions {
  readonly signal?: AbortSignal;
  /**
   * A monotonic clock, ms, that a warm model's `provision` accounts its phases with (`lastProvision`); the engine
   * reads no clock of its own. Without one the phases carry no times.
   */
  readonly clock?: () => number;
}

/** The decisions of one cluster. */
export interface ClusterDecisions {
  provision(
    s: Snapshot,
    pending: readonly Pod[],
    opts?: WireProvisionOptions & EngineCallOptions,
  ): Promise<ProvisionPlan>;
  disrupt(s: Snapshot, opts?: EngineDisruptOptions & EngineCallOptions): Promise<DisruptResult>;
  validate(
    s: Snapshot,
    decision: Decision | Command,
    opts?: EngineDisruptOptions & EngineCallOptions,
  ): Promise<ValidationResult>;
  explainNode(s: Snapshot, node: string, opts?: EngineDisruptOptions & EngineCallOptions): Promise<NodeReport>;
  /**
   * Ships pods ahead of a decision that will name them (a warm model only: a one-off decision has no model to
   * fill), so the decision itself sends only what changed since. Decides nothing.
   */
  preload?(pods: readonly Pod[], opts?: EngineCallOptions): Promise<void>;
  /**
   * Solves a provisioning decision ahead of time and keeps its plan (a warm model only): a later `provision`
   * over the same cluster (nothing in its delta but the clock) with the same pods and options returns that plan
   * instead of solving again. Anything else that changed in between makes `provision` solve as usual.
   */
  speculate?(s: Snapshot, pending: readonly Pod[], opts?: WireProvisionOptions & EngineCallOptions): Promise<void>;
  /**
   * Calls off the speculative solve in flight, if any (the batch it was solved for changed: no decision will take
   * its plan): the worker stops spending its time on it, and the calls queued behind it run sooner. Its plan is
   * not kept; a later `provision` solves as it would without it.
   */
  callOffSpeculation?(): void;
  /** Where the last `provision`'s time went (a warm model only; undefined before the first). */
  lastProvision?(): ProvisionPhases | undefined;
  /** The LP lower bound on the $/h of new capacity for these pods (engine/bound). */
  lowerBound(
    s: Snapshot,
    pods: readonly Pod[],
    opts?: { readonly timeLimitSec?: number; readonly wellKnownLabels?: ReadonlySet<string> } & EngineCallOptions,
  ): Promise<LowerBound>;
  /**
   * A NodeClaim of the static NodePool `pool` built from its template alone (every compatible type of the
   * snapshot's with an available offering, cheapest first); undefined when there is none.
   */
  staticClaim(s: Snapshot, pool: string, opts?: EngineCallOptions): Promise<NewNodeClaimPlan | undefined>;
  /**
   * The names of up to `count` NodeClaims the static NodePool `pool` gives up, the most disposable first: the
   * `unlaunched` ones, then empty nodes, then the cheapest to disrupt, do-not-disrupt last.
   */
  staticScaleDown(
    s: Snapshot,
    pool: string,
    unlaunched: readonly string[],
    count: number,
    opts?: EngineCallOptions,
  ): Promise<string[]>;
}

/**
 * Where the last provisioning decision's time went on the caller's side, ms by the clock the call was given (the
 * controller logs it at debug: docs/controller.md). Diff and pack run on the caller's thread; the rest is waiting.
 */
interface ProvisionPhases {
  /** Waiting behind the model's earlier calls (a speculative solve, a preload, a disruption simulation). */
  readonly queuedMs?: number;
  /** Working out what changed since the model's last version (ModelMirror.diff). */
  readonly diffMs?: number;
  /** Packing the delta and the operation for the worker. */
  readonly packMs?: number;
  /** The worker's round trip: applying the delta and solving (0 when the speculative plan was taken). */
  readonly workerMs?: number;
  /** The plan of a speculative solve was taken, or why not (engine/cluster/speculation.ts). */
  readonly speculative: 'taken' | NotTaken;
  /**
   * When the model changed since the kept plan: the calls that moved it since (by operation; "clock only" when
   * their delta changed nothing else) and what the decision's own delta carries beyond the clock (deltaContents).
   */
  readonly modelChange?: { readonly since: Readonly<Record<string, number>>; readonly delta: Record<string, unknown> };
}

/** A warm model of one cluster on one worker. */
export interface ClusterEngine extends ClusterDecisions {
  readonly name: string;
  /** What the last call shipped to the model. */
  lastShipped(): DeltaStats | undefined;
  /** Whether the last `provision` returned the plan of a speculative solve (nothing shipped, nothing solved). */
  lastReused(): boolean;
  /** Where the last `provision`'s time went (undefined before the first). */
  lastProvision(): ProvisionPhases | undefined;
  preload(pods: readonly Pod[], opts?: EngineCallOptions): Promise<void>;
  speculate(s: Snapshot, pending: readonly Pod[], opts?: WireProvisionOptions & EngineCallOptions): Promise<void>;
  callOffSpeculation(): void;
  /**
   * The snapshot after the commands, carried out one after the other on `s` (applyCommands; `names[k]` names command
   * k's replacements). The model carries them out on itself at the same time, so the next call over the snapshot
   * returned ships nothing for what they changed: a planner that applies its own decisions (the consolidation
   * benchmark) does not send the cluster they rebuilt back to the model. A controller's model learns what changed
   * from the cluster instead (its next call's delta).
   */
  carryOut(
    s: Snapshot,
    commands: readonly Command[],
    names?: ReadonlyArray<readonly string[] | undefined>,
    opts?: EngineCallOptions,
  ): Promise<Snapshot>;
  /** Forgets the model here and in its worker (the next call sends everything). */
  close(): Promise<void>;
}

export interface Engine extends ClusterDecisions {
  /** A warm model of a cluster (one per name). */
  cluster(name: string): ClusterEngine;
  /** A what-if report (engine/whatif) on a worker; `onProgress` hears how far it is. */
  whatIf(
    job: WhatIfJob,
    opts?: EngineCallOptions & { readonly onProgress?: (fraction: number, stage: string) => void },
  ): Promise<WhatIfReport>;
  readonly pool: EnginePool;
  close(): Promise<void>;
}

function wireDisrupt(o: EngineDisruptOptions & EngineCallOptions = {}): WireDisruptOptions {
  const { signal: _signal, clock: _clock, ...rest } = o;
  return rest;
}

function wireProvision(o: WireProvisionOptions & EngineCallOptions = {}): WireProvisionOptions {
  const { signal: _signal, clock: _clock, ...rest } = o;
  return rest;
}

/** An operation, given how to name pods to the model. */
type OpOf = (refs: (pods: readonly Pod[]) => PodRefs) => EngineOp;

type BoundOptions = {
  readonly timeLimitSec?: number;
  readonly wellKnownLabels?: ReadonlySet<string>;
} & EngineCallOptions;

const ops = {
  provision:
    (pending: readonly Pod[], o?: WireProvisionOptions & EngineCallOptions): OpOf =>
    (refs) => ({ op: 'provision', pending: refs(pending), opts: wireProvision(o) }),
  disrupt:
    (o?: EngineDisruptOptions & EngineCallOptions): OpOf =>
    () => ({ op: 'disrupt', opts: wireDisrupt(o) }),
  validate:
    (decision: Decision | Command, o?: EngineDisruptOptions & EngineCallOptions): OpOf =>
    () => ({ op: 'validate', decision, opts: wireDisrupt(o) }),
  explainNode:
    (node: string, o?: EngineDisruptOptions & EngineCallOptions): OpOf =>
    () => ({ op: 'explainNode', node, opts: wireDisrupt(o) }),
  lowerBound:
    (pods: readonly Pod[], o: BoundOptions): OpOf =>
    (refs) => ({
      op: 'lowerBound',
      pods: refs(pods),
      opts: {
        ...(o.timeLimitSec !== undefined ? { timeLimitSec: o.timeLimitSec } : {}),
        ...(o.wellKnownLabels ? { wellKnownLabels: o.wellKnownLabels } : {}),
      },
    }),
  staticClaim:
    (pool: string): OpOf =>
    () => ({ op: 'staticClaim', pool }),
  staticScaleDown:
    (pool: string, unlaunched: readonly string[], count: number): OpOf =>
    () => ({ op: 'staticScaleDown', pool, unlaunched, count }),
};

/** The reply's value, or the worker's error as an Error here. */
function replyValue<T>(reply: TaskReply, what: string): T {
  if (reply.ok) return reply.value as T;
  if ('stale' in reply) throw new PoolError(`${what}: the model was out of date (${reply.message})`);
  const { name, message, package: missing } = reply.error;
  // A what-if's own error and a package not installed are the user's to fix: their message as it is.
  const e =
    name === 'WhatIfError'
      ? new WhatIfError(message)
      : missing !== undefined
        ? new MissingPackageError(missing, message)
        : new Error(`${what}: ${message}`);
  if (reply.error.stack && !(e instanceof WhatIfError) && !(e instanceof MissingPackageError))
    e.stack = `${e.stack}\n    in the engine worker: ${reply.error.stack}`;
  throw e;
}

let oneOffs = 0;

type ProgressFn = (fraction: number, stage: string) => void;

/** One what-if task (a job or a part of one) on a worker; `onProgress` hears the worker's progress. */
async function whatIfTask(
  pool: EnginePool,
  task: { readonly part: WhatIfPart; readonly job: ArrayBuffer; readonly types?: readonly TypeChunk[] },
  work: number,
  signal: AbortSignal | undefined,
  onProgress: ProgressFn | undefined,
): Promise<WhatIfPartResult> {
  const { port1, port2 } = onProgress ? new MessageChannel() : { port1: undefined, port2: undefined };
  if (port1)
    port1.onmessage = (e: MessageEvent<{ fraction: number; stage: string }>) =>
      onProgress!(e.data.fraction, e.data.stage);
  const body = { kind: 'whatIf' as const, ...task, ...(port2 ? { port: port2 } : {}) };
  try {
    const reply = await pool.run(
      body as never,
      { work },
      { transfer: [body.job, ...(port2 ? [port2] : [])], lp: true, ...(signal ? { signal } : {}) },
    );
    return replyValue<WhatIfPartResult>(reply, 'what-if');
  } finally {
    port1?.close();
  }
}

/** A what-if report on the pool: whole, or its plan and its bound on two workers at once. */
async function whatIfOnPool(
  pool: EnginePool,
  types: TypeShipper,
  job: WhatIfJob,
  opts: EngineCallOptions & { readonly onProgress?: ProgressFn },
): Promise<WhatIfReport> {
  // A built snapshot's instance types travel once per engine (pool/catalogs.ts), not with every job.
  const wire = job.built ? types.encode(job.built) : undefined;
  const bytes = pack(wire ? { ...job, built: wire.built } : job);
  // Queued jobs go largest first (pool/queue.ts).
  const work = whatIfWork(job);
  const part = (which: WhatIfPart, buf: ArrayBuffer, onProgress?: ProgressFn) =>
    whatIfTask(pool, { part: which, job: buf, ...(wire ? { types: wire.chunks } : {}) }, work, opts.signal, onProgress);
  // Whole, unless two workers would otherwise wait: then its plan and its bound at once (whatif/job.ts). In a
  // batch every worker has a job to take, and a split only adds work: each part unpacks the job (and builds
  // the snapshot from a job's cluster objects), and the pool runs two tasks for one.
  if (pool.free < 2) return (await part('all', bytes, opts.onProgress)) as WhatIfReport;
  const bound = part('bound', bytes.slice(0));
  const plan = part('plan', bytes, opts.onProgress).then((r) => {
    opts.onProgress?.(0.9, 'lower bound');
    return r;
  });
  const [p, b] = await Promise.allSettled([plan, bound]);
  if (p.status === 'rejected') throw p.reason;
  if (b.status === 'rejected') throw b.reason;
  return withBound(p.value as UnboundReport, b.value as ReportBound);
}

export function createEngine(config: EngineConfig = {}): Engine {
  const pool = new EnginePool(config);
  const types = new TypeShipper();
  const timeoutMs = config.timeoutMs ?? 60_000;
  const clusters = new Map<string, ClusterEngine>();

  /** One operation on a one-off model: everything sent, the model dropped after. */
  async function oneOff<T>(
    s: Snapshot,
    op: OpOf,
    extra: readonly Pod[],
    signal?: AbortSignal,
    callTimeoutMs = timeoutMs,
  ): Promise<T> {
    const { delta, refs } = new ModelMirror().diff(s, extra);
    const body = {
      kind: 'op' as const,
      model: `one-off-${++oneOffs}`,
      keep: false,
      delta: pack(delta),
      op: pack(op(refs)),
    };
    const reply = await pool.run(
      body,
      {},
      { transfer: [body.delta, body.op], timeoutMs: callTimeoutMs, ...(signal ? { signal } : {}) },
    );
    return replyValue<T>(reply, body.model);
  }

  const decisions: ClusterDecisions = {
    provision: (s, pending, o) => oneOff(s, ops.provision(pending, o), pending, o?.signal),
    disrupt: async (s, o) =>
      fromWire(await oneOff<WireDisruptResult>(s, ops.disrupt(o), [], o?.signal, disruptTimeoutMs(timeoutMs, o))),
    validate: (s, d, o) => oneOff(s, ops.validate(d, o), [], o?.signal),
    explainNode: (s, node, o) => oneOff(s, ops.explainNode(node, o), [], o?.signal),
    lowerBound: (s, pods, o = {}) => oneOff(s, ops.lowerBound(pods, o), pods, o.signal),
    staticClaim: (s, pool, o) => oneOff(s, ops.staticClaim(pool), [], o?.signal),
    staticScaleDown: (s, pool, unlaunched, count, o) =>
      oneOff(s, ops.staticScaleDown(pool, unlaunched, count), [], o?.signal),
  };

  return {
    ...decisions,
    pool,
    cluster(name) {
      let c = clusters.get(name);
      if (!c) clusters.set(name, (c = clusterEngine(name, pool, timeoutMs, () => clusters.delete(name))));
      return c;
    },
    whatIf: (job, opts = {}) => whatIfOnPool(pool, types, job, opts),
    async close() {
      await Promise.all([...clusters.values()].map((c) => c.close().catch(() => {})));
      await pool.close();
    },
  };
}

/** A decision's plan (only a speculative solve, called off, has none). */
function solved(plan: ProvisionPlan | undefined): ProvisionPlan {
  if (!plan) throw new Error('engine: a provisioning decision came back without a plan');
  return plan;
}

/** How `send` finishes a call: what to commit and report, how to retry once on a stale model, and its limits. */
interface SendHow<T> {
  commit: () => void;
  stats: Omit<DeltaStats, 'bytes'>;
  retry: () => Promise<T>;
  signal: AbortSignal | undefined;
  /** This call's timeout, when not the engine's. */
  timeoutMs?: number;
  /** A speculative solve's call-off flag. */
  callOff?: SpeculationFlag;
  /** The operation, by name (what moved the model since a kept plan: `ModelCaller.sinceKept`). */
  what: string;
}

/**
 * A warm model's caller side: its mirror, the plan of its last speculative solve and the flag of the one in
 * flight, and a queue so its calls run one at a time.
 */
class ModelCaller {
  private readonly mirror = new ModelMirror();
  private tail: Promise<unknown> = Promise.resolve();
  private readonly ahead = new SpeculativePlan();
  /** The calls that moved the model since the kept plan was solved, by operation (a decision's log line). */
  private sinceKept = new Map<string, number>();
  /** The speculative solve in flight (queued or running), which `callOffSpeculation` stops. */
  private speculating: SpeculationFlag | undefined;
  /** What the last call shipped to the model. */
  shipped: DeltaStats | undefined;
  /** Whether the last `provision` returned the plan of a speculative solve. */
  reused = false;
  /** Where the last decision's time went (not a speculative solve's). */
  phases: ProvisionPhases | undefined;
  /** The commands of the last disruption decision and the mirror's version it was made at (the model keeps them). */
  private decided: { readonly version: number; readonly commands: readonly Command[] } | undefined;
  /** The phases of the provision under way, and the clock they are timed by. */
  private timing:
    | {
        diffMs: number;
        packMs: number;
        workerMs: number;
        speculative: 'taken' | NotTaken;
        modelChange?: ProvisionPhases['modelChange'];
        now: () => number;
      }
    | undefined;

  /** The decision's clock, 0 when it has none or outside a decision. */
  private now(): number {
    return this.timing?.now() ?? 0;
  }

  constructor(
    readonly name: string,
    private readonly pool: EnginePool,
    private readonly timeoutMs: number,
  ) {}

  /** The model is lost or half-updated: the next call starts it over, and no plan made on it is reused. */
  private restart(): void {
    this.mirror.reset();
    this.forgetKept();
    this.decided = undefined;
  }

  /** A disruption decision, queued; the model keeps its commands for a carryOut by place (ops.ts). */
  disrupt(s: Snapshot, o: (EngineDisruptOptions & EngineCallOptions) | undefined, callTimeoutMs: number) {
    return this.inOrder(async () => {
      this.decided = undefined;
      const r = fromWire(await this.call<WireDisruptResult>(s, ops.disrupt(o), [], o?.signal, callTimeoutMs));
      const d = r.decision;
      if (d.kind !== 'noop')
        this.decided = {
          version: this.mirror.version,
          commands: [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])],
        };
      return r;
    });
  }

  /** Calls run in order, each after the previous settled. */
  inOrder<T>(f: () => Promise<T>): Promise<T> {
    const run = this.tail.then(f);
    this.tail = run.catch(() => {});
    return run;
  }

  /** An operation on the model, queued behind its other calls. */
  queued<T>(
    s: Snapshot,
    op: OpOf,
    extra: readonly Pod[],
    signal?: AbortSignal,
    callTimeoutMs = this.timeoutMs,
  ): Promise<T> {
    return this.inOrder(() => this.call<T>(s, op, extra, signal, callTimeoutMs));
  }

  private async call<T>(
    s: Snapshot,
    op: OpOf,
    extra: readonly Pod[],
    signal?: AbortSignal,
    callTimeoutMs = this.timeoutMs,
  ): Promise<T> {
    this.reused = false;
    const { delta, commit, refs, stats } = this.mirror.diff(s, extra);
    const operation = op(refs);
    return this.send<T>(delta, pack(operation), {
      what: operation.op,
      commit,
      stats,
      retry: () => this.call<T>(s, op, extra, signal, callTimeoutMs),
      signal,
      timeoutMs: callTimeoutMs,
    });
  }

  /** Runs a delta and an operation on the model's worker; a stale model is started over once (`retry`). */
  private async send<T>(delta: SnapshotDelta, op: ArrayBuffer, how: SendHow<T>): Promise<T> {
    const packing = this.now();
    const body = {
      kind: 'op' as const,
      model: this.name,
      keep: true,
      delta: pack(delta),
      op,
      ...(how.callOff ? { callOff: how.callOff.buffer } : {}),
    };
    const sent = this.now();
    if (this.timing) this.timing.packMs += sent - packing;
    this.shipped = { ...how.stats, bytes: body.delta.byteLength };
    try {
      const reply = await this.pool.run(
        body,
        { model: this.name },
        {
          transfer: [body.delta, body.op],
          timeoutMs: how.timeoutMs ?? this.timeoutMs,
          ...(how.signal ? { signal: how.signal } : {}),
        },
      );
      if (this.timing) this.timing.workerMs += this.now() - sent;
      if (!reply.ok && 'stale' in reply) {
        this.restart();
        return await how.retry();
      }
      how.commit();
      this.moved(how.what, delta);
      return replyValue<T>(reply, `cluster ${this.name}`);
    } catch (e) {
      // The worker died or the call was cut short: its model is lost or half-updated; start it over next time.
      this.restart();
      throw e;
    }
  }

  /**
   * A provisioning decision: the speculative plan when the model has not changed since it was solved (only the
   * clock moved) and the operation is byte for byte the same, else a solve on the worker, kept for next time.
   * A speculative solve (`callOff` given) that was called off before it began gives no plan.
   */
  async provision(
    s: Snapshot,
    pending: readonly Pod[],
    o: (WireProvisionOptions & EngineCallOptions) | undefined,
    callOff?: SpeculationFlag,
  ): Promise<ProvisionPlan | undefined> {
    this.reused = false;
    const diffing = this.now();
    const { delta, commit, refs, stats } = this.mirror.diff(s, pending);
    const packing = this.now();
    const op = pack(ops.provision(pending, o)(refs));
    if (this.timing) {
      this.timing.diffMs += packing - diffing;
      this.timing.packMs += this.now() - packing;
    }
    const key = new Uint8Array(op.slice(0));
    const kept = this.reuseSpeculative(delta, key);
    if (kept) return kept;
    this.forgetKept();
    const plan = await this.send<ProvisionPlan | undefined>(delta, op, {
      what: 'provision',
      commit,
      stats,
      retry: () => this.provision(s, pending, o, callOff),
      signal: o?.signal,
      ...(callOff ? { callOff } : {}),
    });
    if (plan) {
      this.ahead.keep(this.mirror.version, key, plan);
      this.sinceKept.clear();
    }
    return plan;
  }

  private forgetKept(): void {
    this.ahead.forget();
    this.sinceKept.clear();
  }

  /**
   * A call moved the model to its next version (`delta` applied): noted for a later decision's log line. A call
   * that changed nothing but the clock and left the model as it was (a disruption pass over an unchanged cluster)
   * carries the kept plan forward: only a call that changed what a solve reads makes it stale.
   */
  private moved(what: string, delta: SnapshotDelta): void {
    const clock = clockOnly(delta);
    if (clock && what !== 'carryOut') this.ahead.carry(delta.base, delta.version);
    const key = clock ? `${what} (clock only)` : what;
    this.sinceKept.set(key, (this.sinceKept.get(key) ?? 0) + 1);
  }

  /** A provisioning decision (not a speculative solve), queued behind the model's other calls, its phases kept. */
  decide(s: Snapshot, pending: readonly Pod[], o: (WireProvisionOptions & EngineCallOptions) | undefined) {
    const now = o?.clock ?? (() => 0);
    const asked = now();
    return this.inOrder(async () => {
      const queuedMs = now() - asked;
      const timing: NonNullable<ModelCaller['timing']> = {
        diffMs: 0,
        packMs: 0,
        workerMs: 0,
        speculative: 'none kept',
        now,
      };
      this.timing = timing;
      try {
        return solved(await this.provision(s, pending, o));
      } finally {
        this.timing = undefined;
        const { now: _now, speculative, modelChange, ...ms } = timing;
        const why = { speculative, ...(modelChange ? { modelChange } : {}) };
        this.phases = o?.clock ? { queuedMs, ...ms, ...why } : why;
      }
    });
  }

  /** The kept speculative plan, if a decision with this delta and packed operation may have it (nothing shipped). */
  private reuseSpeculative(delta: SnapshotDelta, op: Uint8Array): ProvisionPlan | undefined {
    if (this.timing) {
      const why = this.ahead.whyNot(this.mirror.version, delta, op);
      this.timing.speculative = why ?? 'taken';
      if (why === 'model changed')
        this.timing.modelChange = { since: Object.fromEntries(this.sinceKept), delta: deltaContents(delta) };
    }
    const kept = this.ahead.take(this.mirror.version, delta, op);
    if (!kept) return undefined;
    this.reused = true;
    this.shipped = { full: false, pods: 0, nodes: 0, types: 0, bytes: 0 };
    return kept;
  }

  /** A provisioning solve ahead of the decision, in order with the other calls, that `callOffSpeculation` stops. */
  async speculate(
    s: Snapshot,
    pending: readonly Pod[],
    o: (WireProvisionOptions & EngineCallOptions) | undefined,
  ): Promise<void> {
    const flag = new SpeculationFlag();
    this.speculating = flag;
    try {
      await this.inOrder(() => this.provision(s, pending, o, flag));
    } finally {
      if (this.speculating === flag) this.speculating = undefined;
    }
  }

  /** Calls off the speculative solve in flight, if any. */
  callOffSpeculation(): void {
    this.speculating?.callOff();
  }

  /**
   * The commands carried out here and on the model at once (the worker's copy while this thread makes its own);
   * then the mirror takes the result as what the model holds, shipping nothing. Should this thread's copy fail, the
   * worker's failed the same way (the same data, the same commands) and the model is where the delta left it.
   */
  async carryOut(
    s: Snapshot,
    commands: readonly Command[],
    names: ReadonlyArray<readonly string[] | undefined>,
    signal?: AbortSignal,
  ): Promise<Snapshot> {
    this.reused = false;
    const onModel = this.carryOutOnModel(s, commands, names, signal);
    let after: Snapshot;
    try {
      after = applyCommands(s, commands, names);
    } catch (e) {
      await onModel.catch(() => {});
      throw e;
    }
    await onModel;
    this.mirror.assume(after);
    return after;
  }

  /** Ships what changed up to `s` and has the model carry the commands out (once more from nothing if it was stale). */
  private carryOutOnModel(
    s: Snapshot,
    commands: readonly Command[],
    names: ReadonlyArray<readonly string[] | undefined>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { delta, commit, stats } = this.mirror.diff(s);
    const op: EngineOp = { op: 'carryOut', commands: this.placesOf(commands, delta) ?? commands, names };
    this.decided = undefined;
    return this.send<void>(delta, pack(op), {
      what: 'carryOut',
      commit,
      stats,
      retry: () => this.carryOutOnModel(s, commands, names, signal),
      signal,
    });
  }

  /**
   * The commands' places among the last decision's, when the model still keeps it (the delta changes nothing but
   * the clock since) and every one is its own object; else undefined (they are shipped).
   */
  private placesOf(commands: readonly Command[], delta: SnapshotDelta): { decided: number[] } | undefined {
    const kept = this.decided;
    if (!kept || kept.version !== delta.base || !clockOnly(delta)) return undefined;
    const at = commands.map((c) => kept.commands.indexOf(c));
    return at.every((i) => i >= 0) ? { decided: at } : undefined;
  }

  /** Ships the pods the model lacks, with no operation; nothing to ship: no task. */
  async preload(pods: readonly Pod[], signal?: AbortSignal): Promise<void> {
    const early = this.mirror.preload(pods);
    if (!early) return;
    const body = { kind: 'op' as const, model: this.name, keep: true, delta: pack(early.delta) };
    try {
      const reply = await this.pool.run(
        body,
        { model: this.name },
        { transfer: [body.delta], timeoutMs: this.timeoutMs, ...(signal ? { signal } : {}) },
      );
      // A stale model (its worker restarted): the next decision starts it over and sends everything anyway.
      if (!reply.ok && 'stale' in reply) return this.restart();
      replyValue<void>(reply, `cluster ${this.name}`);
      early.commit();
      this.moved('preload', early.delta);
      this.shipped = { ...early.stats, bytes: body.delta.byteLength };
    } catch (e) {
      this.restart();
      throw e;
    }
  }

  /** Waits for the calls queued, then forgets the model here and in its worker. */
  async close(): Promise<void> {
    await this.tail;
    this.restart();
    // The drop goes to the model's worker (routed by name), then no worker owns the name.
    await this.pool.run({ kind: 'drop', model: this.name }, { model: this.name }).catch(() => {});
    this.pool.forget(this.name);
  }
}

/** A warm model of one cluster, its calls on a ModelCaller. */
function clusterEngine(name: string, pool: EnginePool, timeoutMs: number, onClose: () => void): ClusterEngine {
  const m = new ModelCaller(name, pool, timeoutMs);
  return {
    name,
    lastShipped: () => m.shipped,
    lastReused: () => m.reused,
    lastProvision: () => m.phases,
    provision: (s, pending, o) => m.decide(s, pending, o),
    speculate: (s, pending, o) => m.speculate(s, pending, o),
    callOffSpeculation: () => m.callOffSpeculation(),
    disrupt: (s, o) => m.disrupt(s, o, disruptTimeoutMs(timeoutMs, o)),
    validate: (s, d, o) => m.queued(s, ops.validate(d, o), [], o?.signal),
    explainNode: (s, node, o) => m.queued(s, ops.explainNode(node, o), [], o?.signal),
    lowerBound: (s, pods, o = {}) => m.queued(s, ops.lowerBound(pods, o), pods, o.signal),
    staticClaim: (s, pool, o) => m.queued(s, ops.staticClaim(pool), [], o?.signal),
    staticScaleDown: (s, pool, unlaunched, count, o) =>
      m.queued(s, ops.staticScaleDown(pool, unlaunched, count), [], o?.signal),
    preload: (pods, o) => m.inOrder(() => m.preload(pods, o?.signal)),
    carryOut: (s, commands, names = [], o) => m.inOrder(() => m.carryOut(s, commands, names, o?.signal)),
    async close() {
      onClose();
      await m.close();
    },
  };
}
