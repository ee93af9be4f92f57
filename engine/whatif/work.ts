// An estimate of a what-if job's work, read on the calling thread where the Engine queues the job (no decision
// here: the job itself runs in a worker, whatif/job.ts).
import type { WhatIfJob } from './job.ts';

/**
 * An estimate of a job's work, to run a batch's largest jobs first (engine/pool/queue.ts): the pods it places or
 * may move. Over the pool benchmark's 64 jobs a job's CPU time grows with it (correlation 0.77); cheap to count
 * and a function of the job alone, so a batch's order is the same on every run.
 */
export function whatIfWork(job: WhatIfJob): number {
  if (job.built) {
    const s = job.built.snapshot;
    return s.nodes.reduce((a, n) => a + n.pods.length, s.pendingPods.length);
  }
  return job.objects?.pods.length ?? 0;
}
