// Karpenter scheduling acceptance: Custom Constraints (docs/karpenter/test-cases.md §11.1–§11.4).
// Left out: the decision-duration metric half of "restricted labels" (metrics, Kubernetes objects); the
// catalog's second copy of these blocks repeats the same expectations and is not duplicated here.
import { expect, it, describe } from 'vitest';
import { pod } from '../../fixtures/builders.ts';
import { INTEGER_INSTANCE_LABEL_KEY } from '../../fixtures/instancetypes.ts';
import {
  ARCH,
  CAPACITY_TYPE,
  Cluster,
  eachSolver,
  HOSTNAME,
  INSTANCE_TYPE,
  OS,
  req,
  suitePool,
  ZONE,
} from './harness.ts';

const Z1 = 'test-zone-1';
const Z2 = 'test-zone-2';
const Z3 = 'test-zone-3';

eachSolver((s) => {
  const cluster = (pool = suitePool()) => new Cluster(s, { nodePools: [pool] });
  const withReqs = (...r: ReturnType<typeof req>[]) =>
    suitePool({ requirements: [req(CAPACITY_TYPE, 'In', 'spot', 'on-demand'), ...r] });
  /** One pass with one pod; the pod's node labels, or undefined when it stays pending. */
  const labelsFor = (c: Cluster, p: ReturnType<typeof pod>) => {
    c.provision([p]);
    return c.nodeOf(p)?.labels;
  };

  describe('NodePool with Labels', () => {
    const labelled = () => suitePool({ labels: { 'test-key': 'test-value' } });
    it("should schedule unconstrained pods that don't have matching node selectors", () => {
      expect(labelsFor(cluster(labelled()), pod())).toMatchObject({ 'test-key': 'test-value' });
    });
    it('should not schedule pods that have conflicting node selectors', () => {
      expect(labelsFor(cluster(labelled()), pod({ nodeSelector: { 'test-key': 'different-value' } }))).toBeUndefined();
    });
    it('should not schedule pods that have node selectors with undefined key', () => {
      expect(labelsFor(cluster(), pod({ nodeSelector: { 'test-key': 'test-value' } }))).toBeUndefined();
    });
    it('should schedule pods that have matching requirements', () => {
      const p = pod({ required: [[req('test-key', 'In', 'test-value', 'another-value')]] });
      expect(labelsFor(cluster(labelled()), p)).toMatchObject({ 'test-key': 'test-value' });
    });
    it('should not schedule pods that have conflicting requirements', () => {
      expect(
        labelsFor(cluster(labelled()), pod({ required: [[req('test-key', 'In', 'another-value')]] })),
      ).toBeUndefined();
    });
  });

  describe('Well Known Labels', () => {
    it('should use NodePool constraints', () => {
      expect(labelsFor(cluster(withReqs(req(ZONE, 'In', Z2))), pod())?.[ZONE]).toBe(Z2);
    });
    it('should use node selectors', () => {
      expect(labelsFor(cluster(withReqs(req(ZONE, 'In', Z1, Z2))), pod({ nodeSelector: { [ZONE]: Z2 } }))?.[ZONE]).toBe(
        Z2,
      );
    });
    it('should not schedule nodes with a hostname selector', () => {
      const c = cluster();
      const p = pod({ nodeSelector: { [HOSTNAME]: 'red-node' } });
      expect(labelsFor(c, p)).toBeUndefined();
      expect(c.nodes).toHaveLength(0);
    });
    it('should not schedule the pod if nodeselector unknown', () => {
      expect(
        labelsFor(cluster(withReqs(req(ZONE, 'In', Z1))), pod({ nodeSelector: { [ZONE]: 'unknown' } })),
      ).toBeUndefined();
    });
    it('should not schedule if node selector outside of NodePool constraints', () => {
      expect(labelsFor(cluster(withReqs(req(ZONE, 'In', Z1))), pod({ nodeSelector: { [ZONE]: Z2 } }))).toBeUndefined();
    });
    it('should schedule compatible requirements with Operator=In', () => {
      expect(labelsFor(cluster(), pod({ required: [[req(ZONE, 'In', Z3)]] }))?.[ZONE]).toBe(Z3);
    });
    it('should schedule compatible requirements with Operator=Gt', () => {
      expect(
        labelsFor(cluster(withReqs(req(INTEGER_INSTANCE_LABEL_KEY, 'Gt', '8'))), pod())?.[INTEGER_INSTANCE_LABEL_KEY],
      ).toBe('16');
    });
    it('should schedule compatible requirements with Operator=Lt', () => {
      expect(
        labelsFor(cluster(withReqs(req(INTEGER_INSTANCE_LABEL_KEY, 'Lt', '8'))), pod())?.[INTEGER_INSTANCE_LABEL_KEY],
      ).toBe('2');
    });
    it('should schedule compatible requirements with Operator=Gte', () => {
      expect(
        labelsFor(cluster(withReqs(req(INTEGER_INSTANCE_LABEL_KEY, 'Gte', '16'))), pod())?.[INTEGER_INSTANCE_LABEL_KEY],
      ).toBe('16');
    });
    it('should schedule compatible requirements with Operator=Lte', () => {
      expect(
        labelsFor(cluster(withReqs(req(INTEGER_INSTANCE_LABEL_KEY, 'Lte', '2'))), pod())?.[INTEGER_INSTANCE_LABEL_KEY],
      ).toBe('2');
    });
    it('should not schedule incompatible preferences and requirements with Operator=In', () => {
      expect(labelsFor(cluster(), pod({ required: [[req(ZONE, 'In', 'unknown')]] }))).toBeUndefined();
    });
    it('should schedule compatible requirements with Operator=NotIn', () => {
      expect(labelsFor(cluster(), pod({ required: [[req(ZONE, 'NotIn', Z1, Z2, 'unknown')]] }))?.[ZONE]).toBe(Z3);
    });
    it('should not schedule incompatible preferences and requirements with Operator=NotIn', () => {
      expect(labelsFor(cluster(), pod({ required: [[req(ZONE, 'NotIn', Z1, Z2, Z3, 'unknown')]] }))).toBeUndefined();
    });
    const anyZone = req(ZONE, 'In', Z1, Z2, Z3, 'unknown');
    it('should schedule compatible preferences and requirements with Operator=In', () => {
      const p = pod({
        required: [[anyZone]],
        preferred: [{ weight: 1, expressions: [req(ZONE, 'In', Z2, 'unknown')] }],
      });
      expect(labelsFor(cluster(), p)?.[ZONE]).toBe(Z2);
    });
    it('should schedule incompatible preferences and requirements with Operator=In', () => {
      const p = pod({ required: [[anyZone]], preferred: [{ weight: 1, expressions: [req(ZONE, 'In', 'unknown')] }] });
      expect(labelsFor(cluster(), p)).toBeDefined();
    });
    it('should schedule compatible preferences and requirements with Operator=NotIn', () => {
      const p = pod({ required: [[anyZone]], preferred: [{ weight: 1, expressions: [req(ZONE, 'NotIn', Z1, Z3)] }] });
      expect(labelsFor(cluster(), p)?.[ZONE]).toBe(Z2);
    });
    it('should schedule incompatible preferences and requirements with Operator=NotIn', () => {
      const p = pod({
        required: [[anyZone]],
        preferred: [{ weight: 1, expressions: [req(ZONE, 'NotIn', Z1, Z2, Z3)] }],
      });
      expect(labelsFor(cluster(), p)).toBeDefined();
    });
    it('should schedule compatible node selectors, preferences and requirements', () => {
      const p = pod({
        nodeSelector: { [ZONE]: Z3 },
        required: [[req(ZONE, 'In', Z1, Z2, Z3)]],
        preferred: [{ weight: 1, expressions: [req(ZONE, 'In', Z1, Z2, Z3)] }],
      });
      expect(labelsFor(cluster(), p)?.[ZONE]).toBe(Z3);
    });
    it('should combine multidimensional node selectors, preferences and requirements', () => {
      const p = pod({
        nodeSelector: { [ZONE]: Z3, [INSTANCE_TYPE]: 'arm-instance-type' },
        required: [[req(ZONE, 'In', Z1, Z3), req(INSTANCE_TYPE, 'In', 'default-instance-type', 'arm-instance-type')]],
        preferred: [
          { weight: 1, expressions: [req(ZONE, 'NotIn', 'unknown'), req(INSTANCE_TYPE, 'NotIn', 'unknown')] },
        ],
      });
      expect(labelsFor(cluster(), p)).toMatchObject({ [ZONE]: Z3, [INSTANCE_TYPE]: 'arm-instance-type' });
    });
  });

  describe('Constraints Validation', () => {
    it('should not schedule pods that have node selectors with restricted labels', () => {
      const c = cluster();
      const p = pod({ required: [[req(HOSTNAME, 'In', 'test')]] });
      const { plan } = c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
      // Karpenter ignores the pod before scheduling rather than failing it (spec §1.10).
      expect(plan.ignored.map((e) => e.uid)).toEqual([p.uid]);
    });
    it('should not schedule pods that have node selectors with restricted domains', () => {
      // Karpenter's RestrictedLabelDomains (pkg/apis/v1/labels.go).
      for (const domain of ['kubernetes.io', 'k8s.io', 'karpenter.sh']) {
        const c = cluster();
        const p = pod({ required: [[req(`${domain}/test`, 'In', 'test')]] });
        const { plan } = c.provision([p]);
        expect(c.scheduled(p)).toBe(false);
        expect(
          plan.ignored.map((e) => e.uid),
          domain,
        ).toEqual([p.uid]);
      }
    });
    // Karpenter's LabelDomainExceptions: sub-domains of the restricted kubernetes domains that NodePools may set.
    const exceptions = ['kops.k8s.io', 'node.kubernetes.io', 'node-restriction.kubernetes.io'];
    it('should schedule pods that have node selectors with label in restricted domains exceptions list', () => {
      const c = cluster(withReqs(...exceptions.map((d) => req(`${d}/test`, 'In', 'test-value'))));
      for (const d of exceptions) expect(labelsFor(c, pod())?.[`${d}/test`]).toBe('test-value');
    });
    it('should schedule pods that have node selectors with label in subdomain from restricted domains exceptions list', () => {
      const c = cluster(withReqs(...exceptions.map((d) => req(`subdomain.${d}/test`, 'In', 'test-value'))));
      for (const d of exceptions) expect(labelsFor(c, pod())?.[`subdomain.${d}/test`]).toBe('test-value');
    });
    it('should schedule pods that have node selectors with label in wellknown label list', () => {
      const c = cluster();
      const ps = [
        pod({ nodeSelector: { [ZONE]: Z1 } }),
        pod({ nodeSelector: { [INSTANCE_TYPE]: 'default-instance-type' } }),
        pod({ nodeSelector: { [ARCH]: 'arm64' } }),
        pod({ nodeSelector: { [OS]: 'linux' } }),
        pod({ nodeSelector: { [CAPACITY_TYPE]: 'spot' } }),
      ];
      c.provision(ps);
      for (const p of ps) expect(c.scheduled(p), p.name).toBe(true);
    });
  });

  describe('Scheduling Logic', () => {
    const defined = () => withReqs(req('test-key', 'In', 'test-value'));
    it('should not schedule pods with nodePool which is not ready', () => {
      expect(labelsFor(cluster(suitePool({ ready: false })), pod())).toBeUndefined();
    });
    it('should not schedule pods that have node selectors with In operator and undefined key', () => {
      expect(labelsFor(cluster(), pod({ required: [[req('test-key', 'In', 'test-value')]] }))).toBeUndefined();
    });
    it('should schedule pods that have node selectors with NotIn operator and undefined key', () => {
      const labels = labelsFor(cluster(), pod({ required: [[req('test-key', 'NotIn', 'test-value')]] }));
      expect(labels).toBeDefined();
      expect(labels!['test-key']).not.toBe('test-value');
    });
    it('should not schedule pods that have node selectors with Exists operator and undefined key', () => {
      expect(labelsFor(cluster(), pod({ required: [[req('test-key', 'Exists')]] }))).toBeUndefined();
    });
    it('should schedule pods that with DoesNotExists operator and undefined key', () => {
      const labels = labelsFor(cluster(), pod({ required: [[req('test-key', 'DoesNotExist')]] }));
      expect(labels).toBeDefined();
      expect(labels).not.toHaveProperty('test-key');
    });
    it("should schedule unconstrained pods that don't have matching node selectors", () => {
      expect(labelsFor(cluster(defined()), pod())?.['test-key']).toBe('test-value');
    });
    it('should schedule pods that have node selectors with matching value and In operator', () => {
      expect(
        labelsFor(cluster(defined()), pod({ required: [[req('test-key', 'In', 'test-value')]] }))?.['test-key'],
      ).toBe('test-value');
    });
    it('should not schedule pods that have node selectors with matching value and NotIn operator', () => {
      expect(
        labelsFor(cluster(defined()), pod({ required: [[req('test-key', 'NotIn', 'test-value')]] })),
      ).toBeUndefined();
    });
    it('should schedule the pod with Exists operator and defined key', () => {
      expect(labelsFor(cluster(defined()), pod({ required: [[req('test-key', 'Exists')]] }))).toBeDefined();
    });
    it('should not schedule the pod with DoesNotExists operator and defined key', () => {
      expect(labelsFor(cluster(defined()), pod({ required: [[req('test-key', 'DoesNotExist')]] }))).toBeUndefined();
    });
    it('should not schedule pods that have node selectors with different value and In operator', () => {
      expect(
        labelsFor(cluster(defined()), pod({ required: [[req('test-key', 'In', 'another-value')]] })),
      ).toBeUndefined();
    });
    it('should schedule pods that have node selectors with different value and NotIn operator', () => {
      expect(
        labelsFor(cluster(defined()), pod({ required: [[req('test-key', 'NotIn', 'another-value')]] }))?.['test-key'],
      ).toBe('test-value');
    });
    const twoValues = () => withReqs(req('test-key', 'In', 'test-value', 'another-value'));
    it('should schedule compatible pods to the same node', () => {
      const c = cluster(twoValues());
      const ps = [
        pod({ required: [[req('test-key', 'In', 'test-value')]] }),
        pod({ required: [[req('test-key', 'NotIn', 'another-value')]] }),
      ];
      c.provision(ps);
      const [n1, n2] = ps.map((p) => c.scheduledNode(p));
      expect(n1!.labels['test-key']).toBe('test-value');
      expect(n2!.labels['test-key']).toBe('test-value');
      expect(n1!.name).toBe(n2!.name);
    });
    it('should schedule incompatible pods to the different node', () => {
      const c = cluster(twoValues());
      const ps = [
        pod({ required: [[req('test-key', 'In', 'test-value')]] }),
        pod({ required: [[req('test-key', 'In', 'another-value')]] }),
      ];
      c.provision(ps);
      const [n1, n2] = ps.map((p) => c.scheduledNode(p));
      expect(n1!.labels['test-key']).toBe('test-value');
      expect(n2!.labels['test-key']).toBe('another-value');
      expect(n1!.name).not.toBe(n2!.name);
    });
    it('Exists operator should not overwrite the existing value', () => {
      const p = pod({ required: [[req(ZONE, 'In', 'non-existent-zone'), req(ZONE, 'Exists')]] });
      expect(labelsFor(cluster(), p)).toBeUndefined();
    });
  });
});
