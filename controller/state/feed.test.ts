// The DRA informers against the simulated API server: listed only when asked for, parsed into cluster state.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { realClock } from '../operator/clock.ts';
import { KubeClient } from '../operator/kube.ts';
import { newLogger } from '../operator/logger.ts';
import { startApiServer, type ApiServer } from '../../sim/apiserver/index.ts';
import { manualClock } from '../../sim/clock.ts';
import { kubeConfigFor } from '../../sim/kubeconfig.ts';
import { MAX_EVENTS } from './delivery.ts';
import { newClusterState } from './feed.ts';
import { PodRecord } from './podrecord.ts';

let server: ApiServer | undefined;
const stops: Array<() => void> = [];
afterEach(async () => {
  for (const s of stops.splice(0)) s();
  await server?.close();
  server = undefined;
});

async function until(cond: () => boolean, tries = 200): Promise<void> {
  for (let i = 0; i < tries && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}

describe('DRA informers', () => {
  it('list ResourceSlices, ResourceClaims and DeviceClasses into cluster state when DRA is simulated', async () => {
    server = await startApiServer({ clock: manualClock() });
    const kc = kubeConfigFor(server);
    server.api.create('deviceclasses.resource.k8s.io', '', {
      metadata: { name: 'gpu' },
      spec: { selectors: [{ cel: { expression: 'device.driver == "gpu.nvidia.com"' } }] },
    });
    server.api.create('resourceslices.resource.k8s.io', '', {
      metadata: { name: 'n1-gpu' },
      spec: {
        driver: 'gpu.nvidia.com',
        nodeName: 'n1',
        pool: { name: 'n1', generation: 1, resourceSliceCount: 1 },
        devices: [{ name: 'gpu-0' }],
      },
    });
    server.api.create('resourceclaims.resource.k8s.io', 'default', {
      metadata: { name: 'c' },
      spec: { devices: { requests: [{ name: 'r', exactly: { deviceClassName: 'gpu' } }] } },
    });
    const log = newLogger({ level: 'silent' });
    for (const dra of [false, true]) {
      const { cluster, informers } = newClusterState({
        kube: new KubeClient(kc),
        kubeConfig: kc,
        clock: realClock,
        log,
        dra,
      });
      const kinds = new Set<string>();
      stops.push(
        cluster.subscribe((c) => {
          kinds.add(c.kind);
        }),
      );
      stops.push(() => informers.stop());
      await informers.start();
      await until(() => informers.listed());
      const s = cluster.workloads.dra.state();
      expect(
        s.resourceSlices.map((x) => x.name),
        `dra=${dra}`,
      ).toEqual(dra ? ['n1-gpu'] : []);
      expect(s.deviceClasses.map((x) => x.name)).toEqual(dra ? ['gpu'] : []);
      expect(s.resourceClaims.map((x) => x.name)).toEqual(dra ? ['c'] : []);
      expect(informers.status().some((x) => x.kind === 'ResourceSlice')).toBe(dra);
      // Subscribers hear about DRA objects (the provisioner opens a batch on ResourceSlice / DeviceClass upserts).
      expect(['ResourceSlice', 'ResourceClaim', 'DeviceClass'].every((k) => kinds.has(k))).toBe(dra);
    }
  });
});

describe('DRA informers on an API server without resource.k8s.io/v1', () => {
  it('count as listed and empty, say so once as an error, and leave the other kinds watching', async () => {
    server = await startApiServer({ clock: manualClock(), unservedGroups: ['resource.k8s.io'] });
    const kc = kubeConfigFor(server);
    const lines: Array<{ level: string; message: string; kind?: string }> = [];
    const log = newLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
    const { cluster, informers } = newClusterState({
      kube: new KubeClient(kc),
      kubeConfig: kc,
      clock: realClock,
      log,
      dra: true,
      backoff: { baseMs: 60_000, maxMs: 60_000 },
    });
    stops.push(() => informers.stop());
    await informers.start();
    await until(() => informers.listed());
    const st = new Map(informers.status().map((x) => [x.kind, x]));
    for (const kind of ['ResourceSlice', 'ResourceClaim', 'ResourceClaimTemplate', 'DeviceClass']) {
      expect(st.get(kind as never)?.unserved, kind).toBe(true);
      expect(
        lines.filter((l) => l.level === 'ERROR' && l.kind === kind && l.message.includes('resource.k8s.io/v1')),
        kind,
      ).toHaveLength(1);
    }
    expect(st.get('Pod')?.unserved).toBe(false);
    expect(st.get('Pod')?.state).toBe('watching');
    expect(cluster.workloads.dra.state().resourceClaims).toEqual([]);
  });

  it('still wait for a kind that fails with anything but 404', async () => {
    server = await startApiServer({ clock: manualClock() });
    server.faults.failNext({ resource: 'resourceslices.resource.k8s.io', verbs: ['list'], code: 500, count: 1000 });
    const kc = kubeConfigFor(server);
    const { informers } = newClusterState({
      kube: new KubeClient(kc),
      kubeConfig: kc,
      clock: realClock,
      log: newLogger({ level: 'silent' }),
      dra: true,
      backoff: { baseMs: 60_000, maxMs: 60_000 },
    });
    stops.push(() => informers.stop());
    await informers.start();
    expect(informers.listed()).toBe(false);
    expect(informers.status().find((x) => x.kind === 'ResourceSlice')?.unserved).toBe(false);
  });
});

describe('the Pod informer', () => {
  it('hands cluster state one record per pod, listed or watched, and its subscribers the same record', async () => {
    server = await startApiServer({ clock: manualClock() });
    const kc = kubeConfigFor(server);
    const podObject = (name: string) => ({
      metadata: { name, labels: { app: 'web' } },
      spec: { containers: [{ name: 'app', image: 'web:1', resources: { requests: { cpu: '250m' } } }] },
    });
    server.api.create('pods', 'default', podObject('listed'));
    const { cluster, informers } = newClusterState({
      kube: new KubeClient(kc),
      kubeConfig: kc,
      clock: realClock,
      log: newLogger({ level: 'silent' }),
    });
    const seen: unknown[] = [];
    stops.push(cluster.subscribe((c) => c.kind === 'Pod' && void seen.push(c.obj)));
    stops.push(() => informers.stop());
    await informers.start();
    await until(() => informers.listed());
    server.api.create('pods', 'default', podObject('watched'));
    await until(() => cluster.workloads.pod('default', 'watched') !== undefined);
    for (const name of ['listed', 'watched']) {
      const rec = cluster.workloads.pod('default', name)!;
      expect(rec).toBeInstanceOf(PodRecord);
      expect(rec.pod.requests).toMatchObject({ cpu: 250 });
      expect((rec.spec as Record<string, unknown>)['containers'], 'the record keeps no JSON spec').toBeUndefined();
      expect(seen).toContain(rec);
    }
  });

  it('removes a deleted pod without parsing the deleted object', async () => {
    server = await startApiServer({ clock: manualClock() });
    const kc = kubeConfigFor(server);
    const podObject = { metadata: { name: 'gone' }, spec: { containers: [{ name: 'app', image: 'web:1' }] } };
    server.api.create('pods', 'default', podObject);
    const { cluster, informers } = newClusterState({
      kube: new KubeClient(kc),
      kubeConfig: kc,
      clock: realClock,
      log: newLogger({ level: 'silent' }),
    });
    const removed: unknown[] = [];
    stops.push(cluster.subscribe((c) => c.kind === 'Pod' && c.type === 'delete' && void removed.push(c.obj)));
    stops.push(() => informers.stop());
    await informers.start();
    await until(() => informers.listed() && cluster.workloads.pod('default', 'gone') !== undefined);
    const rec = cluster.workloads.pod('default', 'gone');
    const parsed = vi.spyOn(cluster.workloads, 'podRecord');
    server.api.delete('pods', 'default', 'gone', { gracePeriodSeconds: 0 });
    await until(() => cluster.workloads.pod('default', 'gone') === undefined);
    expect(parsed).not.toHaveBeenCalled();
    expect(removed, "the change names the pod's last record").toEqual([rec]);
  });
});

describe('pod watch bursts', () => {
  const pod = (name: string) => ({
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'app', image: 'pause', resources: { requests: { cpu: '100m' } } }] },
  });

  it('reach cluster state in the order they happened, a bounded slice per turn of the event loop, once synced', async () => {
    server = await startApiServer({ clock: manualClock() });
    const kc = kubeConfigFor(server);
    // Listed before the informers start: the synced gate opens only once these are all in cluster state.
    for (let i = 0; i < 300; i++) server.api.create('pods', 'default', pod(`before-${i}`));
    const { cluster, informers } = newClusterState({
      kube: new KubeClient(kc),
      kubeConfig: kc,
      clock: realClock,
      log: newLogger({ level: 'silent' }),
    });
    let turn = 0;
    let ticker: ReturnType<typeof setImmediate> | undefined;
    const tick = (): void => {
      turn++;
      ticker = setImmediate(tick);
    };
    ticker = setImmediate(tick);
    stops.push(() => clearImmediate(ticker!));
    const seen: Array<{ what: string; turn: number }> = [];
    stops.push(cluster.subscribe((c) => void (c.kind === 'Pod' && seen.push({ what: `${c.type} ${c.name}`, turn }))));
    stops.push(() => informers.stop());
    await informers.start();
    await until(() => informers.listed(), 6000);
    expect(cluster.workloads.allPods()).toHaveLength(300);

    // A burst written in one go: 3,000 creations, then every one deleted again.
    seen.length = 0;
    const names = Array.from({ length: 3000 }, (_, i) => `burst-${i}`);
    for (const n of names) server.api.create('pods', 'default', pod(n));
    for (const n of names) server.api.delete('pods', 'default', n, { gracePeriodSeconds: 0 });
    await until(() => seen.length >= 6000, 6000); // up to a minute on a loaded machine
    expect(seen.map((s) => s.what)).toEqual([...names.map((n) => `upsert ${n}`), ...names.map((n) => `delete ${n}`)]);
    expect(cluster.workloads.allPods()).toHaveLength(300);
    const perTurn = new Map<number, number>();
    for (const s of seen) perTurn.set(s.turn, (perTurn.get(s.turn) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(MAX_EVENTS);
    expect(perTurn.size).toBeGreaterThanOrEqual(6000 / MAX_EVENTS);
  });
});
