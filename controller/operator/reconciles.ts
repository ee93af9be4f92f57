// How many reconciles a controller runs at once, scaled with the CPU the controller's container requests, as
// Karpenter scales its busiest per-object controllers (sigs.k8s.io/karpenter pkg/utils/controller/controller.go,
// LinearScaleReconciles and CPUCount; the bounds are each controller's minReconciles/maxReconciles constants).
// The requests are CPU_REQUESTS in millicores (pkg/operator/options/options.go: default 1000, and a value of 0
// or less counts as 1000).

/** A controller's bounds: reconciles at 1 core, and at 60 cores and more. */
interface ReconcileScale {
  readonly min: number;
  readonly max: number;
}

/** nodeclaim.lifecycle (pkg/controllers/nodeclaim/lifecycle/controller.go): 1,000 at 1 core to 5,000 at 60. */
export const NODECLAIM_LIFECYCLE_RECONCILES: ReconcileScale = { min: 1000, max: 5000 };

/** node.termination (pkg/controllers/node/termination/controller.go): 100 at 1 core to 5,000 at 60. */
export const NODE_TERMINATION_RECONCILES: ReconcileScale = { min: 100, max: 5000 };

/** The cores CPU_REQUESTS (millicores) stands for; 0 or less is Karpenter's default of 1,000 millicores. */
export function cpuCount(cpuRequestsMillis: number): number {
  return (cpuRequestsMillis > 0 ? cpuRequestsMillis : 1000) / 1000;
}

/**
 * Reconciles at once: `min` at 1 core (or less), `max` at 60 cores (or more), on the straight line between for the
 * cores in between, counted whole (1.5 cores count as 2) and rounded down.
 */
export function linearScaleReconciles(cores: number, scale: ReconcileScale): number {
  const slope = (scale.max - scale.min) / 59;
  const n = Math.trunc(slope * (Math.ceil(cores) - 1)) + scale.min;
  return Math.min(scale.max, Math.max(scale.min, n));
}

/** The engine's workers at most: the cluster's model on one, the static NodePools' models and a failed-over call on the other. */
const MAX_ENGINE_WORKERS = 2;

/**
 * The engine's worker threads for the cores CPU_REQUESTS stands for: one a core, counted whole (1.5 cores count
 * as 2), at least 1 and at most MAX_ENGINE_WORKERS. A second worker on one requested core cannot run beside the
 * first without taking the main thread's CPU, and holds a heap and a thread of its own (about 15 MiB of RSS idle);
 * with one worker a call whose worker died fails and the next runs on the worker piscina starts in its place.
 */
export function engineWorkers(cores: number): number {
  return Math.min(MAX_ENGINE_WORKERS, Math.max(1, Math.ceil(cores)));
}
