import { describe, expect, it } from 'vitest';
import type { ResourceSlice } from '../../../../engine/index.ts';
import { draState } from '../../../../test/fixtures/dra.ts';
import { unpublishedDrivers } from './initialization.ts';

const slice = (
  driver: string,
  node: string,
  pool: string,
  generation: number,
  count: number,
  name = `${pool}-${generation}`,
): ResourceSlice => ({
  name,
  driver,
  nodeName: node,
  pool: { name: pool, generation, resourceSliceCount: count },
  devices: [],
  sharedCounters: [],
});

describe('DRADriverPoolsNotPublished', () => {
  it('waits for every requested driver to publish complete node-local pools', () => {
    expect(unpublishedDrivers(undefined, 'n1', draState())).toEqual([]);
    expect(unpublishedDrivers('gpu.nvidia.com', 'n1', draState())).toEqual(['gpu.nvidia.com']);
    // Another node's pool does not count; one of two slices is not complete; the newest generation decides.
    expect(
      unpublishedDrivers(
        'gpu.nvidia.com',
        'n1',
        draState({ resourceSlices: [slice('gpu.nvidia.com', 'n2', 'p', 1, 1)] }),
      ),
    ).toEqual(['gpu.nvidia.com']);
    expect(
      unpublishedDrivers(
        'gpu.nvidia.com',
        'n1',
        draState({ resourceSlices: [slice('gpu.nvidia.com', 'n1', 'p', 1, 2)] }),
      ),
    ).toEqual(['gpu.nvidia.com']);
    expect(
      unpublishedDrivers(
        'gpu.nvidia.com,nic.example.com',
        'n1',
        draState({
          resourceSlices: [
            slice('gpu.nvidia.com', 'n1', 'p', 1, 2, 'a'),
            slice('gpu.nvidia.com', 'n1', 'p', 1, 2, 'b'),
          ],
        }),
      ),
    ).toEqual(['nic.example.com']);
    expect(
      unpublishedDrivers(
        'gpu.nvidia.com',
        'n1',
        draState({
          resourceSlices: [slice('gpu.nvidia.com', 'n1', 'p', 1, 1), slice('gpu.nvidia.com', 'n1', 'p', 2, 2)],
        }),
      ),
    ).toEqual(['gpu.nvidia.com']);
  });
});
