// Karpenter core pkg/controllers/capacitybuffer/suite_test.go (main at 2266468), the buffer controller's cases:
// resolving podTemplateRef and scalableRef, the replica arithmetic, the PodTemplate watch, the provisioner
// trigger and the virtual pods kept in cluster state; plus the CRD's admission rules. Against the operator in
// the simulator with the gate CapacityBuffer on.
import { afterEach, describe, expect, it } from 'vitest';
import { newCapacityBuffer } from '../../../controller/controllers/capacitybuffer/reconcile.ts';
import { fakeControllerEnv } from '../../fakes/controller.ts';
import { deployment, type Simulation } from '../../support/environment.ts';
import { buffer, bufferCondition, bufferStatus, podTemplate, run, start } from './harness.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const virtual = (s: Simulation, name: string) =>
  s.operator.cluster.workloads.buffers.virtualPodsOf(`default/${name}`) ?? [];

async function started(): Promise<Simulation> {
  sim = await start();
  return sim;
}

describe('CapacityBuffer Controller', () => {
  describe('PodTemplateRef resolution', () => {
    it('should resolve a PodTemplate and set ReadyForProvisioning=True', async () => {
      const s = await started();
      await s.apply(podTemplate('web', { cpu: '500m' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 3 }));
      await s.settle();
      expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toMatchObject({
        status: 'True',
        reason: 'Resolved',
        message: 'Pod template resolved successfully',
      });
      const st = bufferStatus(s, 'buf');
      expect(st.replicas).toBe(3);
      expect(st.podTemplateRef).toEqual({ name: 'web' });
      expect(st.podTemplateGeneration).toBe(1);
      expect(st.provisioningStrategy).toBe('buffer.x-k8s.io/active-capacity');
    });

    it('should set ReadyForProvisioning=False when PodTemplate is not found', async () => {
      const s = await started();
      await s.apply(buffer('buf', { podTemplateRef: { name: 'missing' }, replicas: 1 }));
      await s.settle();
      const c = bufferCondition(s, 'buf', 'ReadyForProvisioning');
      expect(c).toMatchObject({ status: 'False', reason: 'PodTemplateNotFound' });
      expect(c?.message).toMatch(/missing/);
      expect(virtual(s, 'buf')).toEqual([]);
    });
  });

  describe('ScalableRef resolution', () => {
    it('should resolve a Deployment and calculate percentage-based replicas', async () => {
      const s = await started();
      await s.apply(deployment('api', 10, { cpu: '250m' }));
      await s.apply(
        buffer('buf', { scalableRef: { apiGroup: 'apps', kind: 'Deployment', name: 'api' }, percentage: 20 }),
      );
      await s.settle();
      expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toMatchObject({ status: 'True', reason: 'Resolved' });
      expect(bufferStatus(s, 'buf').replicas).toBe(2);
      expect(bufferStatus(s, 'buf').podTemplateRef).toBeUndefined();
      const pods = virtual(s, 'buf');
      expect(pods.map((p) => p.name)).toEqual(['capacity-buffer-buf-1', 'capacity-buffer-buf-2']);
      expect(pods[0]!.labels).toMatchObject({ app: 'api' });
      expect(pods[0]!.requests).toMatchObject({ cpu: 250 });
    });

    it('should set ReadyForProvisioning=False when scalable ref is not found', async () => {
      const s = await started();
      await s.apply(buffer('buf', { scalableRef: { kind: 'Deployment', name: 'nope' }, replicas: 1 }));
      await s.settle();
      expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toMatchObject({
        status: 'False',
        reason: 'ScalableRefNotFound',
      });
    });

    it('should resolve a StatefulSet', async () => {
      const s = await started();
      const sts = JSON.parse(deployment('db', 4, { cpu: '2' }));
      await s.kube.create('StatefulSet', { ...sts, kind: 'StatefulSet', spec: { ...sts.spec, serviceName: 'db' } });
      await s.apply(
        buffer('buf', { scalableRef: { apiGroup: 'apps', kind: 'StatefulSet', name: 'db' }, percentage: 50 }),
      );
      await s.settle();
      expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toMatchObject({ status: 'True' });
      expect(bufferStatus(s, 'buf').replicas).toBe(2);
      expect(virtual(s, 'buf')[0]!.requests).toMatchObject({ cpu: 2000 });
    });

    it('should return error for unsupported kind', async () => {
      const s = await started();
      await s.apply(buffer('buf', { scalableRef: { apiGroup: 'apps', kind: 'DaemonSet', name: 'x' }, replicas: 1 }));
      await s.settle();
      expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toMatchObject({
        status: 'False',
        reason: 'ResolutionFailed',
        message: 'unsupported kind "DaemonSet"',
      });
    });

    it('should return error for unsupported API group', async () => {
      const s = await started();
      await s.apply(buffer('buf', { scalableRef: { apiGroup: 'batch', kind: 'Job', name: 'x' }, replicas: 1 }));
      await s.settle();
      expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toMatchObject({
        status: 'False',
        reason: 'ResolutionFailed',
        message: 'unsupported scalableRef API group "batch"',
      });
    });

    it('should default to 1 replica when workload has nil Spec.Replicas', async () => {
      const s = await started();
      const d = JSON.parse(deployment('api', 1));
      delete d.spec.replicas;
      await s.apply(JSON.stringify(d));
      await s.apply(buffer('buf', { scalableRef: { kind: 'Deployment', name: 'api' }, percentage: 300 }));
      await s.settle();
      expect(bufferStatus(s, 'buf').replicas).toBe(3);
    });
  });

  describe('Replica calculation', () => {
    it('takes the larger of replicas and percentage, and caps it with limits', async () => {
      const s = await started();
      await s.apply(deployment('api', 10, { cpu: '1' }));
      await s.apply(buffer('max', { scalableRef: { kind: 'Deployment', name: 'api' }, percentage: 20, replicas: 5 }));
      await s.apply(
        buffer('capped', { scalableRef: { kind: 'Deployment', name: 'api' }, replicas: 5, limits: { cpu: '3500m' } }),
      );
      await s.apply(podTemplate('worker', { cpu: '2', memory: '4Gi' }));
      await s.apply(buffer('limits', { podTemplateRef: { name: 'worker' }, limits: { cpu: '20', memory: '40Gi' } }));
      await s.settle();
      expect(bufferStatus(s, 'max').replicas).toBe(5);
      expect(bufferStatus(s, 'capped').replicas).toBe(3);
      expect(bufferStatus(s, 'limits').replicas).toBe(10);
    });

    it('follows the scalable when it scales (percentage)', async () => {
      const s = await started();
      await s.apply(deployment('api', 10, { cpu: '100m' }));
      await s.apply(buffer('buf', { scalableRef: { kind: 'Deployment', name: 'api' }, percentage: 10 }));
      await s.settle();
      expect(bufferStatus(s, 'buf').replicas).toBe(1);
      await s.kube.patch('Deployment', 'api', { spec: { replicas: 30 } }, { namespace: 'default' });
      await run(s, 31_000);
      expect(bufferStatus(s, 'buf').replicas).toBe(3);
      expect(virtual(s, 'buf')).toHaveLength(3);
    });
  });

  describe('PodTemplate watch', () => {
    it('should re-resolve the template when its generation changes', async () => {
      const s = await started();
      await s.apply(podTemplate('web', { cpu: '1' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 1 }));
      await s.settle();
      expect(bufferStatus(s, 'buf').podTemplateGeneration).toBe(1);
      await s.apply(podTemplate('web', { cpu: '2' }));
      await s.settle();
      expect(bufferStatus(s, 'buf').podTemplateGeneration).toBe(2);
      expect(virtual(s, 'buf')[0]!.requests).toMatchObject({ cpu: 2000 });
    });
  });

  describe('Provisioner trigger', () => {
    const setup = (withTemplate: boolean) => {
      const env = fakeControllerEnv();
      if (withTemplate) env.add('podtemplates', JSON.parse(podTemplate('web')));
      env.add(
        'capacitybuffers.autoscaling.x-k8s.io',
        JSON.parse(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 1 })),
      );
      let triggers = 0;
      const c = newCapacityBuffer(env.ctx, { trigger: () => triggers++ });
      return { env, c, triggers: () => triggers };
    };
    it('should trigger the provisioner after a successful reconcile', async () => {
      const t = setup(true);
      expect(await t.c.reconcile('default/buf')).toEqual({ kind: 'requeueAfter', ms: 30_000 });
      expect(t.triggers()).toBe(1);
    });
    it('should NOT trigger the provisioner when resolution fails', async () => {
      const t = setup(false);
      await t.c.reconcile('default/buf');
      expect(t.triggers()).toBe(0);
      expect(t.env.cluster.workloads.buffers.virtualPods()).toEqual([]);
    });
  });

  it('should not touch the cache when a buffer has neither ref set', async () => {
    const s = await started();
    await s.apply(buffer('bare', { replicas: 2 }));
    await s.settle();
    expect(bufferCondition(s, 'bare', 'ReadyForProvisioning')).toMatchObject({
      status: 'False',
      reason: 'ResolutionFailed',
      message: 'Neither podTemplateRef nor scalableRef is set',
    });
    expect(virtual(s, 'bare')).toEqual([]);
  });

  describe('Virtual pod cache', () => {
    it('should populate the cache after a successful reconcile', async () => {
      const s = await started();
      await s.apply(podTemplate('web'));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 2 }));
      await s.settle();
      const pods = virtual(s, 'buf');
      expect(pods).toHaveLength(2);
      const uid = (await s.kube.get('CapacityBuffer', 'buf', 'default')).metadata.uid;
      expect(pods.map((p) => p.uid)).toEqual([`${uid}-1`, `${uid}-2`]);
      expect(pods[0]!.annotations).toMatchObject({
        'karpenter.sh/capacity-buffer-fake-pod': 'true',
        'karpenter.sh/capacity-buffer-name': 'buf',
        'karpenter.sh/capacity-buffer-namespace': 'default',
      });
      expect(pods[0]!.priority).toBe(-2147483648);
      expect(pods[0]!.unschedulable).toBe(true);
      // The same objects pass after pass while nothing changes (the engine's warm model ships them once).
      await run(s, 31_000);
      expect(virtual(s, 'buf')).toBe(pods);
    });

    it('should remove the cache entry when resolution fails with NotFound', async () => {
      const s = await started();
      await s.apply(podTemplate('web'));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 2 }));
      await s.settle();
      expect(virtual(s, 'buf')).toHaveLength(2);
      await s.kube.delete('PodTemplate', 'web', { namespace: 'default' });
      await s.settle();
      expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toMatchObject({ reason: 'PodTemplateNotFound' });
      expect(virtual(s, 'buf')).toEqual([]);
    });

    it('should evict the cache entry when the buffer is deleted', async () => {
      const s = await started();
      await s.apply(podTemplate('web'));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 2 }));
      await s.settle();
      await s.kube.delete('CapacityBuffer', 'buf', { namespace: 'default' });
      await s.settle();
      expect(virtual(s, 'buf')).toEqual([]);
      expect(s.operator.cluster.workloads.buffers.virtualPods()).toEqual([]);
    });

    it('drops the PersistentVolumeClaim and ephemeral volumes of the template from the virtual pods', async () => {
      const s = await started();
      await s.apply(
        podTemplate('db', {
          spec: {
            volumes: [
              { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
              { name: 'cfg', configMap: { name: 'cfg' } },
            ],
            containers: [
              {
                name: 'c',
                image: 'pause',
                resources: { requests: { cpu: '1' } },
                volumeMounts: [
                  { name: 'data', mountPath: '/data' },
                  { name: 'cfg', mountPath: '/cfg' },
                ],
              },
            ],
          },
        }),
      );
      await s.apply(buffer('buf', { podTemplateRef: { name: 'db' }, replicas: 1 }));
      await s.settle();
      const [p] = virtual(s, 'buf');
      expect(p?.pvcNames).toBeUndefined();
      expect(p?.ignoredReason).toBeUndefined();
    });
  });

  describe('Admission', () => {
    it('refuses what the CRD refuses, naming the rule', async () => {
      const s = await started();
      await expect(
        s.apply(
          buffer('both', {
            podTemplateRef: { name: 'a' },
            scalableRef: { kind: 'Deployment', name: 'b' },
            replicas: 1,
          }),
        ),
      ).rejects.toThrow(/You must define either PodTemplateRef or ScalableRef, but not both/);
      await expect(s.apply(buffer('bare', { podTemplateRef: { name: 'a' } }))).rejects.toThrow(
        /If podTemplateRef is set, replicas or limits must also be set/,
      );
      await expect(
        s.apply(buffer('neg', { scalableRef: { kind: 'Deployment', name: 'b' }, replicas: -1 })),
      ).rejects.toThrow(/spec\.replicas/);
    });

    it('defaults provisioningStrategy to buffer.x-k8s.io/active-capacity', async () => {
      const s = await started();
      const [created] = await s.apply(buffer('b', { scalableRef: { kind: 'Deployment', name: 'x' }, replicas: 1 }));
      expect(created?.spec?.['provisioningStrategy']).toBe('buffer.x-k8s.io/active-capacity');
    });
  });
});
