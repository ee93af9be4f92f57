// How long the engine waits for one call on a worker.
import { METHOD_DEADLINES } from '../disruption/types.ts';

/** What a disruption call says about its deadlines (EngineDisruptOptions' fields that bear on its length). */
interface DeadlineOptions {
  readonly deadlines?: boolean;
  readonly singleNodeTimeoutMs?: number;
  readonly multiNodeTimeoutMs?: number;
  readonly repackDeadlineMs?: number;
}

/**
 * A disruption call's timeout: the engine's, plus the wall time Karpenter's methods and the repack may spend by their
 * own deadlines when those count. A multi-node consolidation may search for a minute by design (and a single-node one
 * for three): cut at the engine's 60 s, such a call failed and lost its model instead of returning what it found.
 */
export function disruptTimeoutMs(base: number, o: DeadlineOptions | undefined): number {
  if (!o?.deadlines) return base;
  const d = METHOD_DEADLINES;
  return (
    base +
    (o.singleNodeTimeoutMs ?? d.singleNodeTimeoutMs) +
    (o.multiNodeTimeoutMs ?? d.multiNodeTimeoutMs) +
    (o.repackDeadlineMs ?? d.repackDeadlineMs)
  );
}
