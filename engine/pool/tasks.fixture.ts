// A TypeScript task module for tasks.test.ts (typed code, so it loads only through tsx in the worker).
import { threadId } from 'node:worker_threads';

export function double(input: { readonly n: number }): { readonly n: number; readonly thread: number } {
  return { n: input.n * 2, thread: threadId };
}

export function fail(input: { readonly why: string }): never {
  throw new Error(`task failed: ${input.why}`);
}
