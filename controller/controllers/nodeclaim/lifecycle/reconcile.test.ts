// The NodeClaim lifecycle on its own, on the in-memory API with the recording cloud (test/fakes): NodeClaims
// are created here as the provisioner would create them.
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv, type FakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { condition, guide } from '../../../../test/support/environment.ts';
import { wrapCloud } from '../../../../test/support/drills.ts';
import { CreateError, InsufficientCapacityError, NodeClassNotReadyError } from '../../../cloudprovider/types.ts';
import type { KubeObject } from '../../../operator/kube.ts';
import { newNodeClaimLifecycle } from './reconcile.ts';

const claim = (name: string, o: { nodeClass?: string; types?: string[]; capacity?: string[] } = {}): KubeObject => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: {
    name,
    labels: {
      'karpenter.sh/nodepool': 'spot-diverse',
      'karpenter.k8s.aws/ec2nodeclass': o.nodeClass ?? 'default',
      team: 'a',
    },
  },
  spec: {
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: o.nodeClass ?? 'default' },
    requirements: [
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: o.types ?? ['c5.large', 'm5.large'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: o.capacity ?? ['on-demand'] },
    ],
    resources: { requests: { cpu: '1', memory: '1Gi' } },
  },
});

async function lifecycleEnv(o: Parameters<typeof fakeControllerEnv>[0] = {}): Promise<FakeControllerEnv> {
  const env = fakeControllerEnv(o);
  env.run(newNodeClaimLifecycle(env.ctx));
  await env.apply(guide('guide-03.yaml'));
  return env;
}

const get = (env: FakeControllerEnv, name: string) => env.api.find('nodeclaims.karpenter.sh', undefined, name);
const events = (env: FakeControllerEnv, reason: string) =>
  env.api.store.list('events').filter((e) => e['reason'] === reason);

describe('nodeclaim.lifecycle', () => {
  it('adds the finalizer, launches once, and records the instance in labels and status', async () => {
    const env = await lifecycleEnv();
    await env.kube.create('NodeClaim', claim('a'));
    await env.settle();
    const nc = get(env, 'a')!;
    expect(nc.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    expect(condition(nc, 'Launched')?.status).toBe('True');
    expect(condition(nc, 'Registered')).toMatchObject({ status: 'Unknown', reason: 'NodeNotFound' });
    expect(condition(nc, 'Ready')?.status).toBe('Unknown');
    const status = nc.status as {
      providerID: string;
      imageID: string;
      capacity: Record<string, string>;
      allocatable: Record<string, string>;
    };
    expect(status.providerID).toMatch(/^aws:\/\/\/ap-northeast-2[a-d]\/i-/);
    expect(status.imageID).toMatch(/^ami-/);
    expect(status.capacity).toMatchObject({ cpu: '2' });
    expect(nc.metadata.labels).toMatchObject({
      team: 'a',
      'node.kubernetes.io/instance-type': 'c5.large',
      'karpenter.sh/capacity-type': 'on-demand',
    });
    expect(env.cloud.callsOf('create')).toHaveLength(1);
    expect(env.cloud.callsOf('create')[0]).toMatchObject({
      nodeClaimName: 'a',
      nodePoolName: 'spot-diverse',
      nodeClassName: 'default',
      requests: { cpu: 1000 },
    });
    // Touching the NodeClaim again does not launch a second instance.
    await env.kube.patch('NodeClaim', 'a', { metadata: { annotations: { touched: 'yes' } } });
    await env.settle();
    expect(env.cloud.callsOf('create')).toHaveLength(1);
  });

  it('deletes the NodeClaim with an InsufficientCapacityError event when no offering has capacity', async () => {
    const env = await lifecycleEnv();
    env.cloud.failNext(
      'create',
      new InsufficientCapacityError('launching nodeclaim a: all 2 on-demand offerings had insufficient capacity'),
    );
    await env.kube.create('NodeClaim', claim('a'));
    await env.settle();
    expect(get(env, 'a')?.metadata.deletionTimestamp).toBeDefined();
    expect(events(env, 'InsufficientCapacityError').map((e) => (e['involvedObject'] as { name: string }).name)).toEqual(
      ['a'],
    );
    expect(await env.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'insufficient_capacity' })).toBe(
      1,
    );
  });

  it('neither launches nor deletes again a NodeClaim it deleted whose deletion the watch has not shown yet', async () => {
    const env = fakeControllerEnv();
    await env.apply(guide('guide-03.yaml'));
    await env.kube.create('NodeClaim', claim('a'));
    await env.settle();
    // The API server takes the delete, but the watch delivers it only later: cluster state still shows `a` live.
    const late: Array<() => Promise<void>> = [];
    const kube = new Proxy(env.ctx.kube, {
      get(target, prop) {
        if (prop === 'delete')
          return (...args: Parameters<typeof target.delete>) => {
            late.push(() => target.delete(...args));
            return Promise.resolve();
          };
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const lifecycle = newNodeClaimLifecycle({ ...env.ctx, kube });
    env.cloud.failNext('create', new InsufficientCapacityError('launching nodeclaim a: no capacity'));
    await lifecycle.reconcile('a');
    expect(late).toHaveLength(1);
    await lifecycle.reconcile('a');
    expect(env.cloud.callsOf('create')).toHaveLength(1);
    expect(late).toHaveLength(1);
    await env.settle();
    expect(events(env, 'InsufficientCapacityError')).toHaveLength(1);
    for (const f of late) await f();
    await env.settle();
    expect(get(env, 'a')?.metadata.deletionTimestamp).toBeDefined();
  });

  it('deletes a NodeClaim whose EC2NodeClass is not ready', async () => {
    const env = await lifecycleEnv();
    env.cloud.failNext('create', new NodeClassNotReadyError('EC2NodeClass missing not found'));
    await env.kube.create('NodeClaim', claim('a', { nodeClass: 'missing' }));
    await env.settle();
    expect(get(env, 'a')?.metadata.deletionTimestamp).toBeDefined();
    expect(events(env, 'NodeClassNotReady')).toHaveLength(1);
  });

  it('deletes a NodeClaim whose node has not registered 15 minutes after launch', async () => {
    const env = await lifecycleEnv();
    await env.kube.create('NodeClaim', claim('a'));
    await env.settle();
    await env.clock.advance(14 * 60_000);
    expect(get(env, 'a')?.metadata.deletionTimestamp).toBeUndefined();
    await env.clock.advance(60_000);
    expect(get(env, 'a')?.metadata.deletionTimestamp).toBeDefined();
    expect(await env.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'registration_timeout' })).toBe(1);
  });

  it('deletes a NodeClaim whose launch keeps failing 5 minutes after Launched last moved (the failed launch does not hold it)', async () => {
    let attempts = 0;
    const env = await lifecycleEnv({
      cloudProvider: (cp) =>
        wrapCloud(cp, {
          create: async () => {
            attempts++;
            throw new CreateError('launching: the EC2 endpoint did not answer', 'LaunchFailed');
          },
        }),
    });
    await env.kube.create('NodeClaim', claim('a'));
    await env.settle();
    expect(condition(get(env, 'a')!, 'Launched')).toMatchObject({ status: 'Unknown', reason: 'LaunchFailed' });
    await env.clock.advance(4 * 60_000);
    expect(get(env, 'a')?.metadata.deletionTimestamp).toBeUndefined();
    // The next retry after the 5 minutes (the failed launch backs off, 30 s at most) deletes it.
    await env.clock.advance(90_000);
    expect(get(env, 'a')?.metadata.deletionTimestamp).toBeDefined();
    expect(attempts).toBeGreaterThan(5);
    expect(await env.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'launch_timeout' })).toBe(1);
    expect(events(env, 'NodeClaimTimedOut').map((e) => e['message'])).toEqual([
      'NodeClaim a did not launch within 5 minutes; deleting it',
    ]);
  });
  it('launches many NodeClaims at once: 1,000 reconciles at 1 core, as Karpenter (operator/reconciles.ts)', async () => {
    let inFlight = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const env = await lifecycleEnv({
      cloudProvider: (cp) =>
        wrapCloud(cp, {
          create: async (req) => {
            most = Math.max(most, ++inFlight);
            await gate;
            inFlight--;
            return cp.create(req);
          },
        }),
    });
    const n = 40;
    for (let i = 0; i < n; i++) await env.kube.create('NodeClaim', claim(`c${i}`));
    // Every launch waits on the gate: with 10 reconciles at once, 10 of them would be waiting here, not 40.
    for (let turns = 0; most < n && turns < 10_000; turns++) await new Promise((r) => setImmediate(r));
    expect(most).toBe(n);
    release();
    await env.settle();
    for (let i = 0; i < n; i++) expect(condition(get(env, `c${i}`)!, 'Launched')?.status).toBe('True');
  });
});
