// The engine the CLI's commands run on (what-if reports). Starting one starts worker threads that load the
// engine, so a process that runs several commands (tests call main() again and again) keeps one and grows it
// when a command wants more workers. Idle workers do not keep the process alive: a `karpenter-ts whatif`
// process ends when its command returns.
import { BATCH_RESOURCE_LIMITS, createEngine, type Engine } from '../engine/index.ts';

let current: Engine | undefined;

/** An engine with at least `threads` workers. */
export async function cliEngine(threads: number): Promise<Engine> {
  if (current && current.pool.threads >= threads) return current;
  const old = current;
  // What-if batches: the workers' larger young generation (engine/pool/pool.ts).
  current = createEngine({ threads, resourceLimits: BATCH_RESOURCE_LIMITS });
  await old?.close();
  return current;
}
