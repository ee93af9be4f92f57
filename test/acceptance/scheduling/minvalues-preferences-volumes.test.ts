// Karpenter scheduling acceptance: minValues (docs/karpenter/scheduling.md §2.14), PreferencePolicy (§2.17) and volume
// topology as far as Pod.volumeRequirements models it (docs/karpenter/test-cases.md §11.11, §12.16).
// Left out, with reasons:
// - VolumeUsage cases about CSI attach limits (CSINode allocatable counts, ephemeral volumes, default and
//   newest storage classes, CSI migration), PVC/PV/StorageClass validation (unsupported provisioner or
//   topology key, Immediate binding, deleting or Lost PVCs, missing bind-completed annotation) and NFS: they
//   need Kubernetes objects; the engine receives resolved volume topology only.
// - "hostname-or-zone PV alternatives" and "valid multi-volume topology alternative after pruning": dropping
//   hostname terms and crossing several volumes' alternatives happen where PVCs are resolved, before the engine.
import { describe, expect, it } from 'vitest';
import type { TopologySpreadConstraint } from '../../../engine/domain/types.ts';
import { pod, pods } from '../../fixtures/builders.ts';
import { fakeInstanceTypes, INTEGER_INSTANCE_LABEL_KEY } from '../../fixtures/instancetypes.ts';
import {
  CAPACITY_TYPE,
  Cluster,
  counts,
  eachSolver,
  HOSTNAME,
  INSTANCE_TYPE,
  req,
  suitePool,
  topologyPool,
  ZONE,
} from './harness.ts';

const aff = { security: 's2' };
const zoneAnti = { podAntiAffinity: { required: [{ labelSelector: { matchLabels: aff }, topologyKey: ZONE }] } };
const withMin = (key: string, minValues: number, operator: 'In' | 'Exists', ...values: string[]) => ({
  key,
  operator,
  values,
  minValues,
});

eachSolver((s) => {
  describe('minValues', () => {
    const pool = (...r: ReturnType<typeof withMin>[]) =>
      suitePool({ requirements: [req(CAPACITY_TYPE, 'In', 'spot', 'on-demand'), ...r] });
    it('should keep enough instance types on the NodeClaim to satisfy minValues', () => {
      const c = new Cluster(s, {
        nodePools: [pool(withMin(INSTANCE_TYPE, 2, 'In', 'small-instance-type', 'default-instance-type'))],
      });
      const p = pod({ cpu: '1' });
      const { plan } = c.provision([p]);
      const r = plan.newNodeClaims[0]!.requirements.find((x) => x.key === INSTANCE_TYPE)!;
      expect(new Set(r.values)).toEqual(new Set(['small-instance-type', 'default-instance-type']));
      expect(r.minValues).toBe(2);
      expect(c.scheduledNode(p).labels[INSTANCE_TYPE]).toBe('small-instance-type');
    });
    it('should not schedule when the NodePool cannot meet minValues (Strict)', () => {
      const c = new Cluster(s, { nodePools: [pool(withMin(INSTANCE_TYPE, 2, 'In', 'small-instance-type'))] });
      const p = pod();
      const { plan } = c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
      // The pool's own types cannot meet it: no template (Karpenter's scheduler error).
      expect(plan.unschedulable[0]!.reason).toBe('nodepool requirements filtered out all available instance types');
    });
    it('should not schedule a pod that narrows the NodeClaim below minValues (Strict)', () => {
      const c = new Cluster(s, { nodePools: [pool(withMin(INSTANCE_TYPE, 2, 'Exists'))] });
      const p = pod({ nodeSelector: { [INSTANCE_TYPE]: 'small-instance-type' } });
      const { plan } = c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
      // Karpenter's words (SatisfiesMinValues), inside the per-NodePool reason.
      expect(plan.unschedulable[0]!.reason).toContain(
        `minValues requirement is not met for label(s) (label(s)=[${INSTANCE_TYPE}])`,
      );
    });
    it('should relax minValues to what the instance types achieve (BestEffort)', () => {
      const c = new Cluster(s, {
        nodePools: [pool(withMin(INSTANCE_TYPE, 2, 'Exists'))],
        options: { minValuesPolicy: 'BestEffort' },
      });
      const p = pod({ nodeSelector: { [INSTANCE_TYPE]: 'small-instance-type' } });
      const { plan } = c.provision([p]);
      expect(c.scheduled(p)).toBe(true);
      const claim = plan.newNodeClaims[0]!;
      expect(claim.minValuesRelaxed).toBe(true);
      const r = claim.requirements.find((x) => x.key === INSTANCE_TYPE)!;
      expect(r.values).toEqual(['small-instance-type']);
      // A relaxed requirement asks for what the options achieve; left at 2 the NodeClaim could never launch.
      expect(r.minValues).toBe(1);
    });
    it('should fail NodeClaims whose minValues are lost to the MaxInstanceTypes truncation (Strict)', () => {
      // 61 distinct `integer` values are needed, but only the 60 cheapest types are kept on a NodeClaim.
      const c = new Cluster(s, {
        nodePools: [pool(withMin(INTEGER_INSTANCE_LABEL_KEY, 61, 'Exists'))],
        instanceTypes: fakeInstanceTypes(100),
      });
      const p = pod();
      const { plan } = c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
      const poolName = c.nodePools[0]!.name;
      // Karpenter's exact text (scheduler.go TruncateInstanceTypes), typographic apostrophes included.
      expect(plan.unschedulable[0]!.reason).toBe(
        `pod didn\u2019t schedule because NodePool couldn\u2019t meet minValues requirements, validating minValues, minValues requirement is not met for label(s) (label(s)=[${INTEGER_INSTANCE_LABEL_KEY}]) (NodePool=${poolName})`,
      );
    });
  });

  describe('PreferencePolicy', () => {
    const both = (
      build: () => ReturnType<typeof pod>[],
      check: (c: Cluster, ps: ReturnType<typeof pod>[]) => void,
      policy: 'Respect' | 'Ignore',
    ) => {
      const c = new Cluster(s, { nodePools: [topologyPool()], options: { preferencePolicy: policy } });
      const ps = build();
      c.provision(ps);
      check(c, ps);
    };
    const preferZone2 = () => [pod({ preferred: [{ weight: 1, expressions: [req(ZONE, 'In', 'test-zone-2')] }] })];
    it('should apply preferred node affinity under Respect', () => {
      both(preferZone2, (c, [p]) => expect(c.scheduledNode(p!).labels[ZONE]).toBe('test-zone-2'), 'Respect');
    });
    it('should not apply preferred node affinity under Ignore', () => {
      // Without the preference the NodeClaim keeps every zone; the fake provider launches in the first offering's.
      both(preferZone2, (c, [p]) => expect(c.scheduledNode(p!).labels[ZONE]).toBe('test-zone-1'), 'Ignore');
    });
    const anywhere: TopologySpreadConstraint = {
      maxSkew: 1,
      topologyKey: ZONE,
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: aff },
    };
    const spreadAnyway = () => pods(4, { labels: aff, spread: [anywhere] });
    it('should honor ScheduleAnyway spreads under Respect', () => {
      both(spreadAnyway, (c) => expect(c.skew(ZONE, { matchLabels: aff })).toEqual(counts(1, 1, 2)), 'Respect');
    });
    it('should ignore ScheduleAnyway spreads under Ignore', () => {
      both(spreadAnyway, (c) => expect(c.skew(ZONE, { matchLabels: aff })).toEqual([4]), 'Ignore');
    });
    const preferApart = () =>
      pods(3, {
        labels: aff,
        affinity: {
          podAntiAffinity: {
            preferred: [{ weight: 1, podAffinityTerm: { labelSelector: { matchLabels: aff }, topologyKey: HOSTNAME } }],
          },
        },
      });
    it('should honor preferred pod anti-affinity under Respect', () => {
      both(preferApart, (c) => expect(c.nodes).toHaveLength(3), 'Respect');
    });
    it('should ignore preferred pod anti-affinity under Ignore', () => {
      both(preferApart, (c) => expect(c.nodes).toHaveLength(1), 'Ignore');
    });
    it('should still relax required node affinity terms under Ignore', () => {
      const ps = () => [pod({ required: [[req(ZONE, 'In', 'invalid')], [req(ZONE, 'In', 'test-zone-3')]] })];
      both(ps, (c, [p]) => expect(c.scheduledNode(p!).labels[ZONE]).toBe('test-zone-3'), 'Ignore');
    });
  });

  describe('Volume Topology', () => {
    const zonesOf = (c: Cluster, ps: ReturnType<typeof pod>[]) => ps.map((p) => c.scheduledNode(p).labels[ZONE]);
    it('should launch nodes for pods with a persistent volume in multiple zones (ORed terms) with zonal anti-affinity', () => {
      const c = new Cluster(s, { nodePools: [topologyPool()] });
      const ps = pods(2, {
        labels: aff,
        affinity: zoneAnti,
        volumeRequirements: [[req(ZONE, 'In', 'test-zone-1')], [req(ZONE, 'In', 'test-zone-2')]],
      });
      c.provision(ps);
      expect(c.nodes).toHaveLength(2);
      const zones = zonesOf(c, ps);
      expect(new Set(zones).size).toBe(2);
      for (const z of zones) expect(['test-zone-1', 'test-zone-2']).toContain(z);
    });
    it('should launch nodes for pods with a storage class allowing zone-1 or zone-2 with zonal anti-affinity', () => {
      // allowedTopologies with two terms: the same alternatives as the PV case once resolved at the boundary.
      const c = new Cluster(s, { nodePools: [topologyPool()] });
      const ps = pods(2, {
        labels: aff,
        affinity: zoneAnti,
        volumeRequirements: [[req(ZONE, 'In', 'test-zone-1')], [req(ZONE, 'In', 'test-zone-2')]],
      });
      c.provision(ps);
      expect(c.nodes).toHaveLength(2);
      expect(new Set(zonesOf(c, ps))).toEqual(new Set(['test-zone-1', 'test-zone-2']));
    });
    it('should leave the zone of a volume allowing two zones open, so zonal anti-affinity places one pod per pass', () => {
      // Derived from spec §3.6: anti-affinity counts every zone a placement may still take (as in "Schrödinger").
      const c = new Cluster(s, { nodePools: [topologyPool()] });
      const ps = pods(3, {
        labels: aff,
        affinity: zoneAnti,
        volumeRequirements: [[req(ZONE, 'In', 'test-zone-1', 'test-zone-2')]],
      });
      c.provision(ps);
      expect(ps.filter((p) => c.scheduled(p))).toHaveLength(1);
      c.provision(ps.filter((p) => !c.scheduled(p)));
      const placed = ps.filter((p) => c.scheduled(p));
      expect(placed).toHaveLength(2);
      expect(new Set(zonesOf(c, placed))).toEqual(new Set(['test-zone-1', 'test-zone-2']));
      c.provision(ps.filter((p) => !c.scheduled(p)));
      expect(ps.filter((p) => c.scheduled(p))).toHaveLength(2);
    });
    it('should schedule a pod with a zonal volume to its zone despite minDomains spread', () => {
      const c = new Cluster(s, { nodePools: [topologyPool()] });
      const spread: TopologySpreadConstraint = {
        maxSkew: 1,
        topologyKey: ZONE,
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: aff },
        minDomains: 3,
      };
      c.provision(pods(3, { labels: aff, spread: [spread] }));
      expect(c.skew(ZONE, { matchLabels: aff })).toEqual(counts(1, 1, 1));
      const withVolume = pod({ labels: aff, spread: [spread], volumeRequirements: [[req(ZONE, 'In', 'test-zone-1')]] });
      c.provision([withVolume]);
      expect(c.scheduledNode(withVolume).labels[ZONE]).toBe('test-zone-1');
      expect(c.skew(ZONE, { matchLabels: aff })).toEqual(counts(1, 1, 2));
    });
  });
});
