// Karpenter scheduling acceptance: Taints (docs/karpenter/test-cases.md §12.15), NodePool limits (docs/karpenter/scheduling.md
// §2.13) and daemonset overhead (§2.10), the last two after the cases of Karpenter's provisioning suite.
// Left out: "should account for overhead using daemonset pod spec instead of daemonset spec" (needs the
// DaemonSet and its pods as Kubernetes objects; the engine receives the chosen pod as DaemonSet.pod).
import { describe, expect, it } from 'vitest';
import type { Taint } from '../../../engine/domain/types.ts';
import { daemonSet, pod, pods, stateNode } from '../../fixtures/builders.ts';
import { defaultFakeInstanceTypes, RESOURCE_GPU_VENDOR_A } from '../../fixtures/instancetypes.ts';
import {
  CAPACITY_TYPE,
  Cluster,
  eachSolver,
  HOSTNAME,
  INSTANCE_TYPE,
  NOT_READY,
  req,
  suitePool,
  topologyPool,
} from './harness.ts';

const testTaint: Taint = { key: 'test', value: 'bar', effect: 'NoSchedule' };

eachSolver((s) => {
  describe('Taints', () => {
    it('should taint nodes with NodePool taints', () => {
      const c = new Cluster(s, { nodePools: [topologyPool({ taints: [testTaint] })] });
      const p = pod({ tolerations: [{ effect: 'NoSchedule', operator: 'Exists' }] });
      const { plan } = c.provision([p]);
      expect(plan.newNodeClaims[0]!.taints).toContainEqual(testTaint);
      expect(c.scheduledNode(p).taints).toContainEqual(testTaint);
    });
    it('should schedule pods that tolerate NodePool constraints', () => {
      const c = new Cluster(s, {
        nodePools: [topologyPool({ taints: [{ key: 'test-key', value: 'test-value', effect: 'NoSchedule' }] })],
      });
      const tolerating = [
        pod({ tolerations: [{ key: 'test-key', operator: 'Exists', effect: 'NoSchedule' }] }),
        pod({ tolerations: [{ key: 'test-key', value: 'test-value', operator: 'Equal', effect: 'NoSchedule' }] }),
      ];
      c.provision(tolerating);
      for (const p of tolerating) expect(c.scheduled(p)).toBe(true);
      const others = [
        pod(), // missing toleration
        pod({ tolerations: [{ key: 'invalid', operator: 'Exists' }] }), // key mismatch
        pod({ tolerations: [{ key: 'test-key', operator: 'Equal', effect: 'NoSchedule' }] }), // value mismatch
      ];
      c.provision(others);
      for (const p of others) expect(c.scheduled(p), p.name).toBe(false);
    });
    it('should provision nodes with taints and schedule pods if the taint is only a startup taint', () => {
      const c = new Cluster(s, {
        nodePools: [
          topologyPool({ startupTaints: [{ key: 'ignore-me', value: 'nothing-to-see-here', effect: 'NoSchedule' }] }),
        ],
      });
      const p = pod();
      c.provision([p]);
      expect(c.scheduled(p)).toBe(true);
    });
    it('should schedule pods that do not tolerate a PreferNoSchedule taint (relaxed last)', () => {
      // spec §2.12, §2.17 step 6: a PreferNoSchedule taint must be tolerated too, until relaxation adds it.
      const soft: Taint = { key: 'soft', value: 'x', effect: 'PreferNoSchedule' };
      for (const preferencePolicy of ['Respect', 'Ignore'] as const) {
        const c = new Cluster(s, { nodePools: [topologyPool({ taints: [soft] })], options: { preferencePolicy } });
        const p = pod();
        c.provision([p]);
        expect(c.scheduledNode(p).taints, preferencePolicy).toContainEqual(soft);
      }
    });
    it('should not generate taints for OpExists', () => {
      const c = new Cluster(s, { nodePools: [topologyPool()] });
      const p = pod({ tolerations: [{ key: 'test-key', operator: 'Exists', effect: 'NoExecute' }] });
      const { plan } = c.provision([p]);
      expect(plan.newNodeClaims[0]!.taints).toEqual([]);
      expect(c.scheduledNode(p).taints).toEqual([NOT_READY]);
    });
  });

  describe('Limits', () => {
    const limited = (limits: Record<string, string>) => suitePool({ limits });
    it('should not schedule when limits are exceeded', () => {
      const used = stateNode({
        name: 'used',
        instanceType: defaultFakeInstanceTypes()[4]!,
        zone: 'test-zone-1',
        capacityType: 'spot',
      });
      const c = new Cluster(s, { nodePools: [limited({ cpu: '10' })], nodes: [used] });
      // The existing 16-CPU node already uses more than the 10-CPU limit; a pod it cannot take stays pending.
      const q = pod({ cpu: '15.9' });
      c.provision([q]);
      expect(c.scheduledNode(q).name).toBe('used');
      const r = pod({ cpu: '1' });
      const { plan } = c.provision([r]);
      expect(c.scheduled(r)).toBe(false);
      // The wording differs between solvers (the wasm solver explains failures afterwards); both name the limits.
      expect(plan.unschedulable[0]!.reason).toMatch(/exceed.*limits/);
    });
    it('should schedule if limits would be met', () => {
      const c = new Cluster(s, { nodePools: [limited({ cpu: '2' })] });
      const p = pod({ cpu: '1' });
      c.provision([p]);
      expect(c.scheduledNode(p).labels[INSTANCE_TYPE]).toBe('small-instance-type');
    });
    it('should partially schedule if limits would be exceeded', () => {
      // Only the 2-CPU type is within a 3-CPU limit; the first NodeClaim holds 2 CPU of it, leaving 1.
      const c = new Cluster(s, { nodePools: [limited({ cpu: '3' })] });
      const ps = pods(2, { cpu: '1.5' });
      c.provision(ps);
      expect(ps.filter((p) => c.scheduled(p))).toHaveLength(1);
      expect(c.nodes).toHaveLength(1);
    });
    it('should not schedule if limits would be exceeded (GPU)', () => {
      const c = new Cluster(s, { nodePools: [limited({ [RESOURCE_GPU_VENDOR_A]: '1' })] });
      const p = pod({ resources: { [RESOURCE_GPU_VENDOR_A]: '1' } });
      c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
    });
    it('should not schedule when the node limit is exhausted', () => {
      const used = stateNode({ name: 'used', allocatable: { cpu: '1', memory: '1Gi', pods: '1' } });
      const c = new Cluster(s, { nodePools: [limited({ nodes: '1' })], nodes: [used] });
      const p = pod({ cpu: '2' });
      const { plan } = c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
      expect(plan.unschedulable[0]!.reason).toMatch(/node limit/);
    });
    it('should not plan more NodeClaims than the node limit allows', () => {
      const c = new Cluster(s, { nodePools: [limited({ nodes: '2' })] });
      const anti = {
        podAntiAffinity: { required: [{ labelSelector: { matchLabels: { app: 'a' } }, topologyKey: HOSTNAME }] },
      };
      const ps = pods(3, { labels: { app: 'a' }, affinity: anti });
      c.provision(ps);
      expect(c.nodes).toHaveLength(2);
      expect(ps.filter((p) => c.scheduled(p))).toHaveLength(2);
    });
  });

  describe('Daemonsets and Node Overhead', () => {
    const typeFor = (
      daemonSets: ReturnType<typeof daemonSet>[],
      pool = suitePool(),
      podOptions: Parameters<typeof pod>[0] = { cpu: '1', memory: '1Gi' },
    ) => {
      const c = new Cluster(s, { nodePools: [pool], daemonSets });
      const p = pod(podOptions);
      const { plan } = c.provision([p]);
      return { node: c.nodeOf(p), claim: plan.newNodeClaims[0] };
    };
    it('should account for overhead', () => {
      const { node, claim } = typeFor([daemonSet('ds', { cpu: '1', memory: '1Gi' })]);
      expect(node!.labels[INSTANCE_TYPE]).toBe('default-instance-type');
      // The NodeClaim asks for the pod and the daemonset together (and one pod slot each).
      expect(claim!.requests).toMatchObject({ cpu: 2000, memory: 2 * 2 ** 30, pods: 2 });
    });
    it('should account for overhead (with startup taint)', () => {
      const pool = suitePool({ startupTaints: [{ key: 'foo.com/taint', effect: 'NoSchedule' }] });
      expect(typeFor([daemonSet('ds', { cpu: '1', memory: '1Gi' })], pool).node!.labels[INSTANCE_TYPE]).toBe(
        'default-instance-type',
      );
    });
    it('should not schedule if overhead is too large', () => {
      expect(typeFor([daemonSet('ds', { cpu: '10000', memory: '10000Gi' })]).node).toBeUndefined();
    });
    it('should ignore daemonsets without matching tolerations', () => {
      const pool = suitePool({ taints: [{ key: 'foo', value: 'bar', effect: 'NoSchedule' }] });
      const p = {
        cpu: '1',
        memory: '1Gi',
        tolerations: [{ key: 'foo', operator: 'Equal' as const, value: 'bar', effect: 'NoSchedule' as const }],
      };
      expect(typeFor([daemonSet('ds', { cpu: '1', memory: '1Gi' })], pool, p).node!.labels[INSTANCE_TYPE]).toBe(
        'small-instance-type',
      );
    });
    it('should count daemonsets that do not tolerate PreferNoSchedule taints', () => {
      const pool = suitePool({ taints: [{ key: 'foo', value: 'bar', effect: 'PreferNoSchedule' }] });
      const p = { cpu: '1', memory: '1Gi', tolerations: [{ operator: 'Exists' as const }] };
      expect(typeFor([daemonSet('ds', { cpu: '1', memory: '1Gi' })], pool, p).node!.labels[INSTANCE_TYPE]).toBe(
        'default-instance-type',
      );
    });
    it('should ignore daemonsets with an invalid selector', () => {
      expect(
        typeFor([daemonSet('ds', { cpu: '1', memory: '1Gi', nodeSelector: { node: 'invalid' } })]).node!.labels[
          INSTANCE_TYPE
        ],
      ).toBe('small-instance-type');
    });
    it('should not place a pod whose host port a daemonset on every node already uses', () => {
      // spec §2.11: a daemon group whose host ports conflict with the pod's is skipped entirely.
      const ds = daemonSet('ds', { cpu: '100m', hostPorts: [8080] });
      expect(typeFor([ds], suitePool(), { cpu: '1', hostPorts: [8080] }).node).toBeUndefined();
      expect(typeFor([ds], suitePool(), { cpu: '1', hostPorts: [9090] }).node).toBeDefined();
    });
    it('should account for daemonset spec affinity', () => {
      const pool = suitePool({
        requirements: [req(CAPACITY_TYPE, 'In', 'spot', 'on-demand'), req('foo', 'In', 'voo')],
      });
      const matching = daemonSet('match', { cpu: '1', memory: '1Gi', required: [[req('foo', 'In', 'voo')]] });
      expect(typeFor([matching], pool).node!.labels[INSTANCE_TYPE]).toBe('default-instance-type');
      const other = daemonSet('other', { cpu: '1', memory: '1Gi', required: [[req('foo', 'In', 'bar')]] });
      expect(typeFor([other], pool).node!.labels[INSTANCE_TYPE]).toBe('small-instance-type');
    });
  });
});
