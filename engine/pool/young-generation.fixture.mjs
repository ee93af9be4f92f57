// A pool worker for young-generation.test.ts, plain JavaScript so that no loader runs (and allocates) in its
// thread first: every task replies with the new space's capacity, bytes, as it was when the module loaded.
import { getHeapSpaceStatistics } from 'node:v8';

const atLoad = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.space_size ?? 0;

export default function run() {
  return { ok: true, value: atLoad };
}
