// The Kubernetes client against an API server that accepts and never answers: every request fails with a
// RequestTimeoutError within its bound (lists by their own, longer one), reported once with its operation,
// and the client hangs up instead of leaving the connection open.
import { afterEach, describe, expect, it } from 'vitest';
import { kubeConfigFor } from '../../sim/kubeconfig.ts';
import { silentServer, type SilentServer } from '../../test/support/silent.ts';
import { KubeClient } from './kube.ts';
import { isRequestTimeout, type TimeoutReport } from './timeouts.ts';

let silent: SilentServer | undefined;
afterEach(async () => {
  await silent?.close();
  silent = undefined;
});

describe('KubeClient timeouts', () => {
  it('fails each request to a silent API server with a RequestTimeoutError naming it, and reports it once', async () => {
    silent = await silentServer();
    const reports: TimeoutReport[] = [];
    const kube = new KubeClient(kubeConfigFor({ url: silent.url, token: 't' }), {
      requestTimeoutMs: 150,
      listTimeoutMs: 300,
      onTimeout: (r) => reports.push(r),
    });
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['get Node', () => kube.get('Node', 'n1')],
      ['list Pod', () => kube.list('Pod')],
      ['patch NodeClaim/status', () => kube.patchStatus('NodeClaim', 'c1', { conditions: [] })],
      ['delete NodeClaim', () => kube.delete('NodeClaim', 'c1')],
      ['create Pod/eviction', () => kube.evict('default', 'p1')],
    ];
    for (const [op, call] of calls) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRequestTimeout(err), op).toBe(true);
      expect(err).toMatchObject({ client: 'kubernetes', operation: op, timeoutMs: op.startsWith('list') ? 300 : 150 });
      expect((err as Error).message).toMatch(/: no answer from the API server within 0\.[13]5? s$/);
    }
    expect(reports.map((r) => r.operation)).toEqual(calls.map(([op]) => op));
    expect(reports[0]).toMatchObject({ target: 'GET /api/v1/nodes/n1' });
    expect(silent.requests().map((r) => r.method)).toEqual(['GET', 'GET', 'PATCH', 'DELETE', 'POST']);
    await new Promise((r) => setTimeout(r, 50));
    expect(silent.abandoned()).toBe(5);
  });
});
