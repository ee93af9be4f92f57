import { describe, expect, it } from 'vitest';
import { pack, packBufferBytes, unpack } from './codec.ts';

describe('the codec', () => {
  it('lets go of the buffer a large message grew, and still packs large and small messages whole', () => {
    const pods = Array.from({ length: 60_000 }, (_, i) => ({
      uid: `0b7c2f9e-uid-${i}`,
      name: `deployment-${i}`,
      cpu: i % 1500,
    }));
    const big = pack({ pods });
    expect(big.byteLength).toBeGreaterThan(2 << 20);
    // msgpackr on its own keeps a buffer at least this message's size for the next pack.
    expect(packBufferBytes()).toBeLessThanOrEqual(1 << 20);
    expect(unpack<{ pods: typeof pods }>(big).pods).toEqual(pods);
    const small = pack({ uid: 'a', pods: [1, 2, 3] });
    expect(unpack(small)).toEqual({ uid: 'a', pods: [1, 2, 3] });
    expect(unpack<{ pods: typeof pods }>(pack({ pods })).pods).toEqual(pods);
  });

  it('keeps a buffer that small messages fit in', () => {
    pack({ pods: Array.from({ length: 1_000 }, (_, i) => `pod-${i}`) });
    const kept = packBufferBytes();
    pack({ pods: Array.from({ length: 1_000 }, (_, i) => `pod-${i}`) });
    expect(packBufferBytes()).toBe(kept);
  });
});
