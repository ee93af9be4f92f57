// Karpenter core test/suites/regression/capacitybuffer_test.go and pkg/controllers/provisioning/buffers_test.go
// (main at 2266468): virtual pods scheduled with the real ones launch the buffer's room; real pods use it and
// the buffer refills; the Provisioning condition says whether the room exists; emptiness and consolidation
// keep it; NodePool limits, several buffers, nodeSelector and anti-affinity of the template hold; with the gate
// off buffers are ignored. The operator in the simulator, the engine on its worker pool.
import { afterEach, describe, expect, it } from 'vitest';
import { deployment, events, label, nodeClaims, pods, running, type Simulation } from '../../support/environment.ts';
import { buffer, bufferCondition, podTemplate, POOL, run, start } from './harness.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function started(o: Parameters<typeof start>[0] = {}): Promise<Simulation> {
  sim = await start(o);
  return sim;
}

const claims = (s: Simulation) => nodeClaims(s).filter((c) => !c.metadata.deletionTimestamp);
const instanceTypes = (s: Simulation) =>
  claims(s)
    .map((c) => label(c, 'node.kubernetes.io/instance-type'))
    .sort();
const cpuOf = (t: string | undefined) => ({ 'm5.large': 2, 'm5.xlarge': 4, 'm5.2xlarge': 8 })[t ?? ''] ?? 0;

async function until(s: Simulation, done: () => boolean, ms: number, what: string): Promise<void> {
  await s.clock.advanceUntil(done, ms, what);
  await s.settle();
}

describe('CapacityBuffer', () => {
  describe('PodTemplateRef Provisioning', () => {
    it('should provision capacity when a buffer with podTemplateRef is applied', async () => {
      const s = await started();
      await s.apply(podTemplate('web', { cpu: '1500m', memory: '1Gi' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 4 }));
      await until(s, () => claims(s).length > 0, 60_000, 'a nodeclaim for the buffer');
      // Four 1.5-cpu pods: room for 6 cpu is launched, and no pod object exists for it.
      expect(instanceTypes(s).reduce((a, t) => a + cpuOf(t), 0)).toBeGreaterThanOrEqual(6);
      expect(pods(s)).toHaveLength(0);
      expect(bufferCondition(s, 'buf', 'Provisioning')).toMatchObject({
        status: 'False',
        reason: 'RequiresNewCapacity',
        message: '4/4 virtual pods required new capacity, 0 failed',
      });
      // The next pass (the buffer controller's 30 s resync triggers one) finds the room on the launched nodes.
      await run(s, 31_000);
      await until(s, () => bufferCondition(s, 'buf', 'Provisioning')?.status === 'True', 120_000, 'Provisioning');
      expect(bufferCondition(s, 'buf', 'Provisioning')).toMatchObject({
        reason: 'FitsExistingCapacity',
        message: 'All 4 virtual pods fit on existing capacity',
      });
      const before = claims(s).length;
      await run(s, 5 * 60_000);
      expect(claims(s)).toHaveLength(before);
    });

    it('should update buffer status when PodTemplate is updated', async () => {
      const s = await started();
      await s.apply(podTemplate('web', { cpu: '1' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 1 }));
      await until(s, () => claims(s).length === 1, 60_000, 'a nodeclaim');
      await s.apply(podTemplate('web', { cpu: '6' }));
      await s.settle();
      await until(s, () => instanceTypes(s).includes('m5.2xlarge'), 120_000, 'room for the bigger template');
    });
  });

  describe('ScalableRef Provisioning', () => {
    it('should provision buffer capacity using scalableRef with percentage', async () => {
      const s = await started();
      await s.apply(deployment('api', 4, { cpu: '1' }));
      await until(s, () => running(s, 'api') === 4, 10 * 60_000, 'the deployment running');
      await s.apply(
        buffer('buf', { scalableRef: { apiGroup: 'apps', kind: 'Deployment', name: 'api' }, percentage: 100 }),
      );
      await s.settle();
      await until(
        s,
        () => bufferCondition(s, 'buf', 'Provisioning')?.status === 'True',
        10 * 60_000,
        'room for 4 more',
      );
      expect(bufferCondition(s, 'buf', 'Provisioning')?.message).toBe('All 4 virtual pods fit on existing capacity');
      expect(pods(s, 'api')).toHaveLength(4);
    });

    it('should recover when scalable ref is created after buffer', async () => {
      const s = await started();
      await s.apply(buffer('buf', { scalableRef: { kind: 'Deployment', name: 'later' }, replicas: 2 }));
      await s.settle();
      expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toMatchObject({ reason: 'ScalableRefNotFound' });
      await s.apply(deployment('later', 0, { cpu: '1' }));
      await run(s, 31_000);
      expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toMatchObject({ status: 'True' });
      await until(s, () => claims(s).length > 0, 60_000, 'room for the buffer');
    });
  });

  describe('Consumer Interaction', () => {
    it('should allow consumer pods to use existing buffer capacity and then refill', async () => {
      const s = await started();
      await s.apply(podTemplate('web', { cpu: '3' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 1 }));
      await until(s, () => bufferCondition(s, 'buf', 'Provisioning')?.status === 'True', 10 * 60_000, 'the room');
      const managed = () => s.operator.cluster.stateNodes().filter((n) => n.managed);
      await until(s, () => managed().length > 0 && managed().every((n) => n.initialized), 10 * 60_000, 'ready');
      const first = claims(s).map((c) => c.metadata.name);
      // A real pod of the buffer's shape lands on the room at once: no new node for it.
      await s.apply(deployment('app', 1, { cpu: '3' }));
      await until(s, () => running(s, 'app') === 1, 60_000, 'the consumer running');
      const host = (pods(s, 'app')[0]!.spec as { nodeName?: string } | undefined)?.nodeName;
      expect(host).toBeTruthy();
      expect(claims(s).some((c) => (c.status as { nodeName?: string })?.nodeName === host)).toBe(true);
      expect(first).toContain(
        claims(s).find((c) => (c.status as { nodeName?: string })?.nodeName === host)?.metadata.name,
      );
      // The buffer refills: a new node for its virtual pod within a resync.
      await until(s, () => claims(s).length > first.length, 2 * 60_000, 'the refill');
    });
  });

  describe('Disruption', () => {
    it('should not empty-consolidate nodes hosting buffer pods', async () => {
      const s = await started();
      await s.apply(podTemplate('web', { cpu: '1' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 1 }));
      await until(s, () => claims(s).length === 1, 60_000, 'a nodeclaim');
      await run(s, 30 * 60_000);
      expect(claims(s)).toHaveLength(1);
      const node = s.operator.cluster.stateNodes().find((n) => n.managed);
      expect(node?.bufferPods).toBe(1);
    });

    it('should consolidate buffer nodes after buffer is deleted', async () => {
      const s = await started();
      await s.apply(podTemplate('web', { cpu: '1' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 1 }));
      await until(s, () => claims(s).length === 1, 60_000, 'a nodeclaim');
      await run(s, 5 * 60_000);
      await s.kube.delete('CapacityBuffer', 'buf', { namespace: 'default' });
      await s.settle();
      await until(s, () => claims(s).length === 0, 30 * 60_000, 'the empty node removed');
    });

    it('keeps the room through consolidation: a node holding real and buffer pods is not replaced by one too small', async () => {
      const s = await started();
      // One pass places the app and the buffer's pod together: one m5.xlarge for 1 + 2.5 cpu.
      await s.apply(podTemplate('web', { cpu: '2500m' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 1 }));
      await s.apply(deployment('app', 1, { cpu: '1' }));
      await until(s, () => running(s, 'app') === 1, 10 * 60_000, 'the app running');
      const first = claims(s).map((c) => c.metadata.name);
      expect(instanceTypes(s)).toEqual(['m5.xlarge']);
      // Counting only the app, an m5.large would do and consolidation would replace the node (then the
      // provisioner would launch the room again, and so on); with the virtual pod in its simulation it does not.
      await run(s, 30 * 60_000);
      expect(claims(s).map((c) => c.metadata.name)).toEqual(first);
      expect(events(s, 'DisruptionLaunching')).toHaveLength(0);
      expect(bufferCondition(s, 'buf', 'Provisioning')).toMatchObject({ status: 'True' });
    });
  });

  describe('Drift', () => {
    it('should allow drift to replace buffer nodes', async () => {
      const s = await started();
      await s.apply(podTemplate('web', { cpu: '1' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 1 }));
      await until(s, () => claims(s).length === 1, 60_000, 'a nodeclaim');
      await run(s, 5 * 60_000);
      const [old] = claims(s).map((c) => c.metadata.name);
      await s.apply(POOL.replace('  template:\n', '  template:\n    metadata:\n      labels:\n        release: v2\n'));
      await s.settle();
      await until(
        s,
        () => claims(s).length === 1 && claims(s)[0]!.metadata.name !== old && label(claims(s)[0]!, 'release') === 'v2',
        30 * 60_000,
        'the drifted buffer node replaced',
      );
      await run(s, 2 * 60_000);
      expect(bufferCondition(s, 'buf', 'Provisioning')).toMatchObject({ status: 'True' });
    });
  });

  describe('NodePool Limits', () => {
    it('should not provision buffer capacity beyond NodePool CPU limit', async () => {
      const s = await started({ pool: POOL.replace('  disruption:', '  limits:\n    cpu: "8"\n  disruption:') });
      await s.apply(podTemplate('web', { cpu: '3' }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 6 }));
      await until(s, () => claims(s).length > 0, 60_000, 'a nodeclaim');
      await run(s, 5 * 60_000);
      expect(instanceTypes(s).reduce((a, t) => a + cpuOf(t), 0)).toBeLessThanOrEqual(8);
      expect(bufferCondition(s, 'buf', 'Provisioning')).toMatchObject({
        status: 'False',
        reason: 'RequiresNewCapacity',
      });
    });
  });

  describe('Multiple Buffers', () => {
    it('should provision capacity independently for multiple buffers', async () => {
      const s = await started();
      await s.apply(podTemplate('a', { cpu: '1' }));
      await s.apply(podTemplate('b', { cpu: '1' }));
      await s.apply(buffer('buf-a', { podTemplateRef: { name: 'a' }, replicas: 2 }));
      await s.apply(buffer('buf-b', { podTemplateRef: { name: 'b' }, replicas: 0 }));
      await until(s, () => bufferCondition(s, 'buf-a', 'Provisioning')?.status === 'True', 10 * 60_000, 'buf-a room');
      expect(bufferCondition(s, 'buf-b', 'Provisioning')).toMatchObject({
        status: 'False',
        reason: 'BufferEmpty',
        message: 'Buffer has zero desired replicas',
      });
    });
  });

  describe('Edge Cases', () => {
    it('should respect nodeSelector from PodTemplate', async () => {
      const s = await started();
      await s.apply(
        podTemplate('web', { cpu: '1', spec: { nodeSelector: { 'node.kubernetes.io/instance-type': 'm5.2xlarge' } } }),
      );
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 1 }));
      await until(s, () => claims(s).length === 1, 60_000, 'a nodeclaim');
      expect(instanceTypes(s)).toEqual(['m5.2xlarge']);
    });
  });

  describe('Anti-Affinity', () => {
    it('should respect pod anti-affinity between virtual buffer pods', async () => {
      const s = await started();
      const antiAffinity = {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } },
          ],
        },
      };
      await s.apply(podTemplate('web', { cpu: '100m', spec: { affinity: antiAffinity } }));
      await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 3 }));
      await until(s, () => claims(s).length >= 3, 60_000, 'three nodeclaims');
      expect(claims(s)).toHaveLength(3);
    });
  });

  it('ignores buffers when the CapacityBuffer gate is off, as Karpenter does', async () => {
    const s = await started({ gates: 'CapacityBuffer=false' });
    await s.apply(podTemplate('web', { cpu: '1' }));
    await s.apply(buffer('buf', { podTemplateRef: { name: 'web' }, replicas: 2 }));
    await run(s, 5 * 60_000);
    expect(claims(s)).toHaveLength(0);
    expect(bufferCondition(s, 'buf', 'ReadyForProvisioning')).toBeUndefined();
    expect(s.operator.controllers.all.map((c) => c.name)).not.toContain('capacitybuffer');
  });
});
