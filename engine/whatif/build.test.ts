import { describe, expect, it } from 'vitest';
import { parseText } from '../api/objects.ts';
import { buildSnapshot, WhatIfError } from './build.ts';
import type { ClusterObjects } from './types.ts';

function objects(yaml: string): ClusterObjects {
  const o: { [K in keyof ClusterObjects]: unknown[] } = { nodes: [], nodeClaims: [], pods: [], nodePools: [], nodeClasses: [], daemonSets: [], pdbs: [], nodeOverlays: [] };
  const field = { Node: 'nodes', NodeClaim: 'nodeClaims', Pod: 'pods', NodePool: 'nodePools', EC2NodeClass: 'nodeClasses', NodeOverlay: 'nodeOverlays', DaemonSet: 'daemonSets', PodDisruptionBudget: 'pdbs' } as const;
  for (const e of parseText(yaml, { assumeReady: true })) {
    if (!e.result.ok) throw new Error(JSON.stringify(e.result.errors));
    const k = e.result.value.kind;
    if (k !== 'Other') o[field[k]]!.push(e.result.value.value);
  }
  return o as unknown as ClusterObjects;
}

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
  const b = buildSnapshot(objects(CLUSTER), { now: 1000 });

  it('joins Nodes and NodeClaims by provider id and keeps an unmatched claim as an in-flight node', () => {
    expect(b.region).toBe('us-west-2');
    const [n1, inflight] = b.snapshot.nodes;
    expect(n1).toMatchObject({ name: 'n1', nodeClaimName: 'web-abcde', hasNode: true, hasNodeClaim: true, managed: true, initialized: true, nodePoolName: 'web' });
    expect(n1!.conditions.consolidatable).toBe(true);
    expect(n1!.pods.map((p) => p.name)).toEqual(['on-n1']);
    expect(inflight).toMatchObject({ name: 'web-fghij', hasNode: false, initialized: false });
  });

  it('treats a pod bound to a missing node as pending, says so, and skips finished pods', () => {
    expect(b.snapshot.pendingPods.map((p) => p.name)).toEqual(['lost']);
    expect(b.snapshot.pendingPods[0]!.nodeName).toBeUndefined();
    expect(b.warnings).toContain('pod default/lost is bound to node gone-node, which is not in the input; treated as pending');
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
    const o = buildSnapshot(objects(CLUSTER + overlays), { now: 1000 });
    const m5 = o.snapshot.instanceTypes.get('web')!.find((t) => t.name === 'm5.large')!;
    expect(m5.offerings.every((x) => x.price === 2.5)).toBe(true);
    expect(m5.capacity['example.com/fuse']).toBe(2);
    expect(o.warnings).toContain('NodeOverlay a-same-weight is not applied (Conflict): conflict with another overlay');
  });

  it('rejects a region the catalog does not have', () => {
    expect(() => buildSnapshot(objects(CLUSTER), { now: 0, region: 'mars-1' })).toThrow(WhatIfError);
    expect(() => buildSnapshot(objects(CLUSTER), { now: 0, region: 'mars-1' })).toThrow(/region mars-1 is not in the EC2 catalog \(known: .*us-west-2.*\); pass --region/);
  });
});
