import { describe, expect, it } from 'vitest';
import { clusterObjects } from '../../test/fixtures/cluster-objects.ts';
import { provisionInput } from '../model/input.ts';
import { solveReference } from '../solver/reference/scheduler.ts';
import { provision } from '../solver/provision.ts';
import { buildSnapshot, WhatIfError } from './build.ts';

const CLUSTER = `
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/region: us-west-2, topology.kubernetes.io/zone: us-west-2b, node.kubernetes.io/instance-type: m5.large, karpenter.sh/nodepool: web, karpenter.sh/initialized: "true", karpenter.sh/registered: "true"}}
spec: {providerID: "aws:///us-west-2b/i-1"}
status: {allocatable: {cpu: 1930m, memory: 7Gi, pods: "29"}, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: web-abcde, labels: {karpenter.sh/nodepool: web}}
spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}], nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: web}}
status: {providerID: "aws:///us-west-2b/i-1", conditions: [{type: Consolidatable, status: "True", reason: Consolidatable, message: "", lastTransitionTime: "2026-11-30T00:00:00Z"}]}
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: web-fghij, labels: {karpenter.sh/nodepool: web}}
spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}], nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: web}}
---
apiVersion: v1
kind: Pod
metadata: {name: on-n1, namespace: default}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: lost, namespace: default}
spec: {nodeName: gone-node, containers: [{name: c}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: default}
spec: {containers: [{name: c}]}
status: {phase: Succeeded}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: web}
spec: {template: {spec: {requirements: [], nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: web}}}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: web}
spec: {amiSelectorTerms: [{alias: al2023@latest}], role: r, subnetSelectorTerms: [{id: subnet-1}], securityGroupSelectorTerms: [{id: sg-1}]}
status: {subnets: [{id: subnet-1, zone: us-west-2b}]}
`;

describe('buildSnapshot', () => {
  const b = buildSnapshot(clusterObjects(CLUSTER), { now: 1000 });

  it('joins Nodes and NodeClaims by provider id and keeps an unmatched claim as an in-flight node', () => {
    expect(b.region).toBe('us-west-2');
    const [n1, inflight] = b.snapshot.nodes;
    expect(n1).toMatchObject({
      name: 'n1',
      nodeClaimName: 'web-abcde',
      hasNode: true,
      hasNodeClaim: true,
      managed: true,
      initialized: true,
      nodePoolName: 'web',
    });
    expect(n1!.conditions.consolidatable).toBe(true);
    expect(n1!.pods.map((p) => p.name)).toEqual(['on-n1']);
    expect(inflight).toMatchObject({ name: 'web-fghij', hasNode: false, initialized: false });
  });

  it('plans karpenter-labelled Nodes of an input without NodeClaims as if their claims were there, and says so', () => {
    const noClaims = clusterObjects(
      CLUSTER.split('---')
        .filter((d) => !d.includes('kind: NodeClaim'))
        .join('---'),
    );
    const nb = buildSnapshot(noClaims, { now: 1000 });
    expect(nb.snapshot.nodes.map((n) => n.name)).toEqual(['n1']);
    expect(nb.snapshot.nodes[0]).toMatchObject({
      hasNodeClaim: true,
      nodeClaimName: 'n1',
      managed: true,
      registered: true,
      initialized: true,
      nodePoolName: 'web',
    });
    expect(nb.warnings).toContain(
      '1 node carries the karpenter.sh/nodepool label but the input has no NodeClaims: planned as if each had its NodeClaim (registered and initialized); add the NodeClaims to the input (kubectl get nodeclaims -o yaml, or karpenter-ts snapshot) for their real conditions',
    );
    // With NodeClaims in the input, a Node without one stays unmanaged: that is a real orphan, not a partial dump.
    const orphan = buildSnapshot(
      clusterObjects(
        CLUSTER.replace(
          'aws:///us-west-2b/i-1"}\nstatus: {allocatable',
          'aws:///us-west-2b/i-9"}\nstatus: {allocatable',
        ),
      ),
      { now: 1000 },
    );
    expect(orphan.snapshot.nodes.find((n) => n.name === 'n1')).toMatchObject({ hasNodeClaim: false });
  });

  it('adds the pods of DaemonSets the input lists without their pods to the nodes they select', () => {
    const ds = (name: string, extra = '') => `---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ${name}, namespace: kube-system}
spec: {selector: {matchLabels: {app: ${name}}}, template: {metadata: {labels: {app: ${name}}}, spec: {${extra}containers: [{name: c, resources: {requests: {cpu: 150m, memory: 64Mi}}}]}}}
`;
    const present = `---
apiVersion: v1
kind: Pod
metadata: {name: agent-x1, namespace: kube-system, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u1, controller: true}]}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: 150m}}}]}
status: {phase: Running}
`;
    const withDs = clusterObjects(
      CLUSTER + ds('logs') + ds('gpu-only', 'nodeSelector: {accelerator: nvidia}, ') + ds('agent') + present,
    );
    const nb = buildSnapshot(withDs, { now: 1000 });
    const n1 = nb.snapshot.nodes.find((n) => n.name === 'n1')!;
    expect(n1.pods.map((p) => p.name).sort()).toEqual(['agent-x1', 'logs-whatif-n1', 'on-n1']);
    expect(n1.pods.find((p) => p.name === 'logs-whatif-n1')).toMatchObject({
      nodeName: 'n1',
      owner: { kind: 'DaemonSet', name: 'logs' },
      requests: { cpu: 150 },
    });
    expect(nb.warnings).toContain(
      '1 DaemonSet pod is not in the input (kube-system/logs on 1 node): added to the nodes the DaemonSets select, from their templates',
    );
    // Not pending pods: a DaemonSet's pods are never placed by the scheduler.
    expect(nb.snapshot.pendingPods.map((p) => p.name)).toEqual(['lost']);
  });

  it('treats a pod bound to a missing node as pending, says so, and skips finished pods', () => {
    expect(b.snapshot.pendingPods.map((p) => p.name)).toEqual(['lost']);
    expect(b.snapshot.pendingPods[0]!.nodeName).toBeUndefined();
    expect(b.warnings).toContain(
      'pod default/lost is bound to node gone-node, which is not in the input; treated as pending',
    );
  });

  it("offers a NodePool's types only in its node class's subnet zones", () => {
    const types = b.snapshot.instanceTypes.get('web')!;
    const zones = new Set(types.flatMap((t) => t.offerings.map((o) => o.zone)));
    expect([...zones]).toEqual(['us-west-2b']);
    expect(b.catalog.get('m5.large')!.offerings.some((o) => o.zone === 'us-west-2a')).toBe(true);
  });

  it('sees the catalog through the NodeOverlays in the input, and warns about one that applies nowhere', () => {
    const overlays = `
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: m5-large-license}
spec: {weight: 5, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}], price: "2.5", capacity: {example.com/fuse: "2"}}
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: a-same-weight}
spec: {weight: 5, requirements: [], priceAdjustment: "+1"}
`;
    const o = buildSnapshot(clusterObjects(CLUSTER + overlays), { now: 1000 });
    const m5 = o.snapshot.instanceTypes.get('web')!.find((t) => t.name === 'm5.large')!;
    expect(m5.offerings.every((x) => x.price === 2.5)).toBe(true);
    expect(m5.capacity['example.com/fuse']).toBe(2);
    expect(o.warnings).toContain('NodeOverlay a-same-weight is not applied (Conflict): conflict with another overlay');
  });

  it('plans a pending pod that requests a resource only a NodeOverlay adds (both solvers), and marks the claim', async () => {
    const overlay = `
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: fuse}
spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}], capacity: {example.com/fuse: "2"}}
`;
    const pod = `
---
apiVersion: v1
kind: Pod
metadata: {name: fuse-user, namespace: default}
spec: {containers: [{name: c, resources: {requests: {cpu: 500m, example.com/fuse: "1"}, limits: {example.com/fuse: "1"}}}]}
status: {phase: Pending}
`;
    const without = buildSnapshot(clusterObjects(CLUSTER + pod), { now: 1000 });
    const user = (s: typeof without.snapshot) => s.pendingPods.filter((p) => p.name === 'fuse-user');
    expect(user(without.snapshot)).toHaveLength(1);
    const refused = solveReference(provisionInput(without.snapshot, user(without.snapshot)));
    expect(refused.newNodeClaims).toHaveLength(0);
    const o = buildSnapshot(clusterObjects(CLUSTER + pod + overlay), { now: 1000 });
    for (const plan of [
      solveReference(provisionInput(o.snapshot, user(o.snapshot))),
      await provision(o.snapshot, user(o.snapshot)),
    ]) {
      expect(plan.unschedulable).toEqual([]);
      expect(plan.newNodeClaims).toHaveLength(1);
      expect(plan.newNodeClaims[0]!.instanceTypes.map((t) => t.name)).toEqual(['m5.large']);
      expect(plan.newNodeClaims[0]!.annotations).toEqual({ 'karpenter.sh/capacity-overlay-applied': 'true' });
    }
  });

  it('rejects a region without built-in prices, naming the flag that reads them', () => {
    expect(() => buildSnapshot(clusterObjects(CLUSTER), { now: 0, region: 'mars-1' })).toThrow(WhatIfError);
    expect(() => buildSnapshot(clusterObjects(CLUSTER), { now: 0, region: 'eu-west-3' })).toThrow(
      /^region eu-west-3 has no built-in prices \(built in: .*us-west-2.*\); run with --live-prices/,
    );
  });

  it('prices a region without built-in prices from live prices: zones from the spot answers, spot per zone', () => {
    const live = {
      region: 'eu-west-3',
      fetchedAt: '2026-11-30T11:00:00.000Z',
      onDemand: { 'm5.large': 0.112, 'c5.large': 0.101 },
      spot: { 'm5.large': { 'eu-west-3a': 0.041, 'eu-west-3c': 0.043 }, 'c5.large': { 'eu-west-3b': 0.039 } },
    };
    const b = buildSnapshot(clusterObjects(CLUSTER.replace(/us-west-2/g, 'eu-west-3')), { now: 0, livePrices: live });
    expect(b.region).toBe('eu-west-3');
    expect(b.live?.fetchedAt).toBe(live.fetchedAt);
    const m5 = b.catalog.get('m5.large')!;
    const offer = (zone: string, ct: string) => m5.offerings.find((o) => o.zone === zone && o.capacityType === ct);
    expect(m5.offerings.map((o) => o.zone).filter((z, i, a) => a.indexOf(z) === i)).toEqual([
      'eu-west-3a',
      'eu-west-3b',
      'eu-west-3c',
    ]);
    expect(offer('eu-west-3a', 'on-demand')).toMatchObject({ price: 0.112, available: true });
    expect(offer('eu-west-3a', 'spot')).toMatchObject({ price: 0.041, available: true });
    expect(offer('eu-west-3b', 'spot')).toMatchObject({ available: false });
    expect(b.catalog.get('r5.large')!.offerings.every((o) => !o.available)).toBe(true);
    expect(() => buildSnapshot(clusterObjects(CLUSTER), { now: 0, livePrices: live })).toThrow(
      /the live prices are for eu-west-3, the snapshot is in us-west-2/,
    );
  });

  it('keeps the built-in price, and says so, for types the live answer lacks in a region that has a table', () => {
    const b = buildSnapshot(clusterObjects(CLUSTER), {
      now: 0,
      livePrices: { region: 'us-west-2', fetchedAt: 'x', onDemand: { 'm5.large': 0.5 }, spot: {} },
    });
    expect(b.catalog.get('m5.large')!.offerings.find((o) => o.capacityType === 'on-demand')!.price).toBe(0.5);
    expect(b.catalog.get('c5.large')!.offerings.find((o) => o.capacityType === 'on-demand')!.price).toBeGreaterThan(0);
    expect(b.live!.fallbackTypes.has('c5.large')).toBe(true);
    expect(b.live!.fallbackTypes.has('m5.large')).toBe(false);
    expect(b.catalog.get('m5.large')!.offerings.some((o) => o.capacityType === 'spot' && o.available)).toBe(false);
  });
});
