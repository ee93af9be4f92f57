// A TypeScript task module for tasks.test.ts (typed code, so it loads only through tsx in the worker).
import { threadId } from 'node:worker_threads';

export function double(input: { readonly n: number }): { readonly n: number; readonly thread: number } {
  return { n: input.n * 2, thread: threadId };
}

export function fail(input: { readonly why: string }): never {
  throw new Error(`task failed: ${input.why}`);
}

/** Burns about `ms` of CPU (the pool benchmark's sanity check that two workers run at once). */
export function spin(input: { readonly ms: number }): number {
  const end = performance.now() + input.ms;
  let x = 0;
  while (performance.now() < end) x++;
  return x;
}
