// The operator's /metrics endpoint writes the exposition piece by piece: the body is the pieces in order, and a
// failure before the first piece is a 500 naming it.
import { describe, expect, it } from 'vitest';
import { serve } from './health.ts';

describe('/metrics', () => {
  it('answers with the pieces of the exposition in order, however many and large', async () => {
    const pieces = Array.from({ length: 300 }, (_, i) => `# piece ${i}\n${'x'.repeat(10_000 + i)}\n`);
    async function* exposition(): AsyncGenerator<string> {
      for (const p of pieces) {
        yield p;
        await new Promise((r) => setImmediate(r));
      }
    }
    const server = await serve(0, { metrics: exposition }, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(await res.text()).toBe(pieces.join(''));
    } finally {
      await server.close();
    }
  });

  it('answers 500 with the error when the exposition fails before its first piece', async () => {
    // biome-ignore lint/correctness/useYield: fails before its first piece, as a collector that throws would
    async function* failing(): AsyncGenerator<string> {
      throw new Error('collector failed: karpenter_nodes_allocatable');
    }
    const server = await serve(0, { metrics: failing }, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(res.status).toBe(500);
      expect(await res.text()).toContain('collector failed: karpenter_nodes_allocatable');
    } finally {
      await server.close();
    }
  });
});
