// A TypeScript worker module for module-url.test.ts (typed code, so it loads only with tsx in the worker).
import { threadId } from 'node:worker_threads';

export function double(input: { readonly n: number }): { readonly n: number; readonly thread: number } {
  return { n: input.n * 2, thread: threadId };
}
