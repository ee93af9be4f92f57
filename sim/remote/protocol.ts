// Messages between the controller benchmark (the parent: simulated cluster, workload, measurements) and the
// controller it runs in a child process (controller-process.ts). IPC with the `advanced` serialization
// (structured clone).
import type { InstanceSpec } from '../cluster/kubelet.ts';

export interface ChildInit {
  readonly t: 'init';
  /** The simulated API server's kubeconfig. */
  readonly kubeConfig: string;
  readonly options?: Readonly<Record<string, string>>;
  readonly launchMs?: number;
  readonly terminateMs?: number;
}

export type Request = 'phase-start' | 'phase-end' | 'events' | 'status' | 'stop';

export type ToChild = ChildInit | { readonly t: 'req'; readonly id: number; readonly op: Request };

/** The simulated kubelet calls the child's cloud makes (the kubelets live with the API server, in the parent). */
type KubeletCall =
  | { readonly t: 'kubelet'; readonly op: 'register'; readonly spec: InstanceSpec }
  | { readonly t: 'kubelet'; readonly op: 'terminate'; readonly providerID: string };

export type FromChild =
  | KubeletCall
  | { readonly t: 'ready' }
  | { readonly t: 'res'; readonly id: number; readonly value?: unknown; readonly error?: string }
  | { readonly t: 'fatal'; readonly error: string };

/** What the child measured over one phase (phase-start to phase-end). */
export interface PhaseStats {
  /** monitorEventLoopDelay (10 ms resolution) over the phase, ms. */
  readonly eventLoopP50Ms: number;
  readonly eventLoopP99Ms: number;
  readonly eventLoopMaxMs: number;
  /** Peak of the process's resident set size, sampled every 100 ms during the phase, MiB. */
  readonly rssPeakMiB: number;
  /** The RSS when the phase started: what the set-up before it left resident, MiB. */
  readonly rssStartMiB: number;
  /**
   * The highest sample of each RSS_WINDOW_MS of the phase, in order, MiB: whether the peak was the phase's own or
   * carried into it from the set-up (V8 gives back an idle heap's room only over the seconds that follow).
   */
  readonly rssWindowsMiB: readonly number[];
  /** At the phase's end: the process's RSS, and the main thread's V8 heap (used, reserved) and external memory. */
  readonly rssEndMiB: number;
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
  readonly externalMiB: number;
  /** Of external: ArrayBuffers (msgpackr buffers, HTTP bodies). */
  readonly arrayBuffersMiB: number;
  /** The main thread's heap pages actually resident, and V8's malloc'd memory outside the heap. */
  readonly heapPhysicalMiB: number;
  readonly mallocedMiB: number;
  /** How large V8 lets the main thread's heap become (Node's default, or --max-old-space-size). */
  readonly heapLimitMiB: number;
  /** The main thread's heap by space (new, old, code, large_object...), resident MiB, at the phase's start and end. */
  readonly spacesStartMiB: Readonly<Record<string, number>>;
  readonly spacesEndMiB: Readonly<Record<string, number>>;
  /** At the phase's end (Linux): the process's anonymous resident memory and its file pages (binary, libraries). */
  readonly rssAnonMiB?: number;
  readonly rssFileMiB?: number;
  /** The main thread's heap in use after a full collection (only with --expose-gc). */
  readonly liveHeapMiB?: number;
  /** After that collection: the main thread's ArrayBuffers still held, and the process's RSS. */
  readonly liveArrayBuffersMiB?: number;
  readonly rssAfterGcMiB?: number;
  /**
   * The controller's malloc trims over the phase (MALLOC_TRIM_INTERVAL): how many, their time in all, ms, and the
   * least bound of karpenter_ts_malloc_trim_duration_seconds' buckets that every one of them took at most, ms.
   */
  readonly mallocTrims?: { readonly count: number; readonly totalMs: number; readonly atMostMs?: number };
  /** Each engine worker at the phase's end: its heap (used, reserved, resident), wasm memory and models. */
  readonly workers: readonly WorkerMemoryMiB[];
  readonly seconds: number;
  /** The main thread's heap snapshot written at the phase's end (only with BENCH_CONTROLLER_HEAP_SNAPSHOTS). */
  readonly heapSnapshot?: string;
  /** The main thread's allocation profile over the phase (only with BENCH_CONTROLLER_ALLOC_PROFILE). */
  readonly allocationProfile?: string;
}

export interface WorkerMemoryMiB {
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
  readonly heapPhysicalMiB: number;
  readonly heapLimitMiB: number;
  readonly liveHeapMiB?: number;
  readonly wasmMiB: number;
  readonly models: readonly string[];
}

/** A provisioning decision as the child saw it get its plan (sim/operator.ts `observeDecisions`). */
export interface ObservedDecision {
  readonly at: number;
  /** `taken` (the plan solved ahead) or why it was solved afresh. */
  readonly speculative: string;
  /** What the decision found of the solve ahead once it had its snapshot (controller/controllers/provisioning/preload.ts). */
  readonly ahead?: string;
  /** How long its engine call waited behind the model's earlier calls, ms. */
  readonly queuedMs?: number;
}

/** Timestamps (wall-clock ms, comparable with the parent's) the child observed since the phase started. */
export interface ObservedEvents {
  readonly windowsClosed: readonly number[];
  readonly nodeClaimsAdded: ReadonlyArray<{ readonly at: number; readonly name: string }>;
  /** Provisioning decisions' plans: `taken` (the speculative plan) or why not (engine/cluster/speculation.ts). */
  readonly decisions: ReadonlyArray<ObservedDecision>;
  readonly disruptionPasses: ReadonlyArray<{
    readonly at: number;
    readonly seconds: number;
    readonly reason: string;
    readonly consolidationType: string;
  }>;
}

export interface ChildStatus {
  readonly synced: boolean;
  readonly busy: boolean;
  /** Pods the controller's cluster state holds as active and not bound to a node. */
  readonly pendingPods: number;
}
