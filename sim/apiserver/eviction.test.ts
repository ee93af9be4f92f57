// The pods/eviction subresource through client-node, with PodDisruptionBudgets.
import * as k8s from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../clock.ts';
import { kubeConfigFor } from '../kubeconfig.ts';
import { MULTIPLE_PDBS_MESSAGE, PDB_VIOLATION_MESSAGE, startApiServer, type ApiServer } from './index.ts';

let server: ApiServer;
let core: k8s.CoreV1Api;

beforeEach(async () => {
  server = await startApiServer({ clock: manualClock() });
  core = kubeConfigFor(server).makeApiClient(k8s.CoreV1Api);
});
afterEach(() => server.close());

/** A pod bound to a node, Running and Ready unless told otherwise. */
function runningPod(
  name: string,
  labels: Record<string, string>,
  ready = true,
  owner?: { kind: string; name: string; uid: string; apiVersion: string },
): void {
  server.api.create('pods', 'default', {
    metadata: { name, labels, ...(owner ? { ownerReferences: [{ ...owner, controller: true }] } : {}) },
    spec: { containers: [{ name: 'c', image: 'pause' }] },
  });
  server.api.bind('default', name, 'node-1');
  server.api.patch(
    'pods',
    'default',
    name,
    'strategic',
    { status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } },
    { subresource: 'status' },
  );
}

function pdb(name: string, spec: Record<string, unknown>): void {
  server.api.create('poddisruptionbudgets.policy', 'default', { metadata: { name }, spec });
}

const evict = (name: string) =>
  core.createNamespacedPodEviction({
    namespace: 'default',
    name,
    body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } },
  });

async function refusal(
  name: string,
): Promise<{ code: number; message: string; details?: { causes?: Array<{ reason: string; message: string }> } }> {
  try {
    await evict(name);
  } catch (e) {
    return JSON.parse((e as k8s.ApiException<string>).body);
  }
  throw new Error(`eviction of ${name} was allowed`);
}

describe('eviction', () => {
  it('evicts while the budget allows, taking one disruption per eviction, then answers 429', async () => {
    for (const n of ['a', 'b', 'c']) runningPod(n, { app: 'web' });
    pdb('web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } });
    await evict('a');
    const a = server.api.get('pods', 'default', 'a');
    expect(a.metadata.deletionTimestamp).toBeDefined();
    const status = server.api.get('poddisruptionbudgets.policy', 'default', 'web').status as Record<string, any>;
    expect(status).toMatchObject({ currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 0, expectedPods: 3 });
    expect(Object.keys(status.disruptedPods)).toEqual(['a']);
    const denied = await refusal('b');
    expect(denied.code).toBe(429);
    expect(denied.message).toBe(PDB_VIOLATION_MESSAGE);
    expect(denied.details?.causes?.[0]).toEqual({
      reason: 'DisruptionBudget',
      message: 'The disruption budget web needs 2 healthy pods and has 2 currently',
    });
    expect(server.api.get('pods', 'default', 'b').metadata.deletionTimestamp).toBeUndefined();
  });

  it('evicts pods no budget covers, and pending pods regardless of their budget', async () => {
    runningPod('free', { app: 'other' });
    server.api.create('pods', 'default', {
      metadata: { name: 'pending', labels: { app: 'web' } },
      spec: { containers: [] },
    });
    pdb('web', { maxUnavailable: 0, selector: { matchLabels: { app: 'web' } } });
    await evict('free');
    await evict('pending');
    expect(server.api.find('pods', 'default', 'pending')).toBeUndefined();
  });

  it('answers 500 for a pod matched by two budgets', async () => {
    runningPod('a', { app: 'web' });
    pdb('one', { minAvailable: 0, selector: { matchLabels: { app: 'web' } } });
    pdb('two', { minAvailable: 0, selector: {} });
    const r = await refusal('a');
    expect(r.code).toBe(500);
    expect(r.message).toContain(MULTIPLE_PDBS_MESSAGE);
  });

  it('lets an unready pod go while the application is healthy (IfHealthyBudget) or always (AlwaysAllow)', async () => {
    runningPod('ok', { app: 'web' });
    runningPod('sick', { app: 'web' }, false);
    runningPod('fine', { app: 'db' });
    runningPod('ill', { app: 'db' }, false);
    pdb('db', { minAvailable: 1, selector: { matchLabels: { app: 'db' } } });
    await evict('ill');
    pdb('web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } });
    expect((await refusal('sick')).code).toBe(429);
    server.api.patch('poddisruptionbudgets.policy', 'default', 'web', 'merge', {
      spec: { unhealthyPodEvictionPolicy: 'AlwaysAllow' },
    });
    await evict('sick');
    expect(server.api.get('pods', 'default', 'sick').metadata.deletionTimestamp).toBeDefined();
  });

  it('counts expected pods from the controller scale for maxUnavailable, and fails safe for bare pods', async () => {
    const rs = server.api.create('replicasets.apps', 'default', {
      metadata: { name: 'web-rs' },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } },
      },
    });
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-rs', uid: rs.metadata.uid! };
    for (const n of ['a', 'b', 'c']) runningPod(n, { app: 'web' }, true, owner);
    pdb('web', { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } });
    // 4 expected, 3 healthy, 3 desired: nothing may go (one replica is already missing).
    expect((await refusal('a')).message).toBe(PDB_VIOLATION_MESSAGE);
    server.api.scale('replicasets.apps', 'default', 'web-rs', 3);
    await evict('a');

    runningPod('bare', { app: 'bare' });
    pdb('bare', { maxUnavailable: 1, selector: { matchLabels: { app: 'bare' } } });
    expect((await refusal('bare')).code).toBe(429);
  });
});
