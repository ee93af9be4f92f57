// The disruption loop's seam for tests and the composition root: which of the engine's methods run, in
// which order (engine PRODUCTION_ORDER, HARNESS_ORDER, or a subset such as ['emptiness']). The default is
// Karpenter's production order followed by the global repack as --consolidation-repack says.
import type { MethodName } from '../../../engine/index.ts';

export type DisruptionMethod = MethodName;
