// Informers.waitForSync with many waits on one signal (the runtime's controllers wait for their kinds on one):
// the signal gets one abort listener for all of them (a listener per wait passed Node's limit of 10 and warned of
// a leak), an abort ends every wait with its reason, and the listener goes with the last wait.
import { getEventListeners } from 'node:events';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../sim/clock.ts';
import type { KubeClient } from '../operator/kube.ts';
import { newLogger } from '../operator/logger.ts';
import { Informers } from './informers.ts';

function unstarted(): Informers {
  const informers = new Informers({
    kube: {} as KubeClient,
    kubeConfig: new KubeConfig(),
    clock: manualClock(),
    log: newLogger({ level: 'silent' }),
  });
  // Never started, so never listed: every wait for these kinds stays pending until its signal aborts.
  informers.add('Node', { apply: () => {}, remove: () => {} });
  informers.add('Pod', { apply: () => {}, remove: () => {} });
  return informers;
}

describe('waiting for informers to sync', () => {
  it('gives a signal one abort listener however many waits share it, and ends them all when it aborts', async () => {
    const informers = unstarted();
    const stop = new AbortController();
    const waits = Array.from({ length: 20 }, (_, i) =>
      informers.waitForSync(i % 2 ? ['Node'] : ['Node', 'Pod'], stop.signal),
    );
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    stop.abort(new Error('shutting down'));
    const settled = await Promise.allSettled(waits);
    expect(settled.every((s) => s.status === 'rejected' && (s.reason as Error).message === 'shutting down')).toBe(true);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('rejects a wait whose signal has aborted already, and resolves at once for kinds it does not inform', async () => {
    const informers = unstarted();
    await expect(informers.waitForSync(['Node'], AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    await expect(informers.waitForSync(['ConfigMap' as never])).resolves.toBeUndefined();
  });
});
