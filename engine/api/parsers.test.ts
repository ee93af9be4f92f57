import { GUIDE_EXAMPLES_DIR } from '../../test/fixtures/guide.ts';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseEC2NodeClass, toNodeClass } from './ec2nodeclass.ts';
import { formatFieldError } from './errors.ts';
import { parseNode } from './node.ts';
import { conditionTrue, parseNodeClaim } from './nodeclaim.ts';
import { parseNodePool } from './nodepool.ts';
import { parseObject, parseText } from './objects.ts';
import { parseDaemonSet, parsePodDisruptionBudget } from './workloads.ts';
import { parseDocuments } from './yaml.ts';

const EXAMPLES = GUIDE_EXAMPLES_DIR;
const H = 3_600_000;
const GI = 1024 ** 3;
const doc = (file: string, i = 0): unknown => parseDocuments(readFileSync(EXAMPLES + file, 'utf8'))[i]!.value;

describe('parseNodePool', () => {
  it('reads guide-01 into the domain NodePool', () => {
    const r = parseNodePool(doc('guide-01.yaml'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const p = r.value;
    expect(p.name).toBe('default');
    expect(p.weight).toBe(50);
    expect(p.ready).toBe(false);
    expect(p.template.labels).toEqual({ team: 'platform', environment: 'production' });
    expect(p.template.expireAfter).toBe(72 * H);
    expect(p.template.nodeClassRef).toEqual({ group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' });
    expect(p.template.requirements[1]).toEqual({
      key: 'karpenter.k8s.aws/instance-generation',
      operator: 'Gt',
      values: ['5'],
    });
    expect(p.limits).toEqual({ cpu: 1_000_000, memory: 1000 * GI });
    expect(p.disruption).toEqual({
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: 60_000,
      budgets: [{ nodes: '10%' }, { nodes: '0', schedule: '0 9 * * MON-FRI', duration: H }],
    });
  });

  it('applies the CRD defaults to a NodePool that leaves them out (guide-05)', () => {
    const r = parseNodePool(doc('guide-05.yaml'), { assumeReady: true });
    expect(r.ok && r.value).toMatchObject({
      weight: 0,
      ready: true,
      limits: {},
      template: { expireAfter: 720 * H, labels: {}, annotations: {}, taints: [], startupTaints: [] },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: 0, budgets: [{ nodes: '10%' }] },
    });
  });

  it('reads Never as null, status readiness, static replicas, minValues, taints and hash annotations', () => {
    const r = parseNodePool({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: {
        name: 's',
        uid: 'u',
        generation: 3,
        annotations: { 'karpenter.sh/nodepool-hash': '123', 'karpenter.sh/nodepool-hash-version': 'v3' },
      },
      spec: {
        replicas: 4,
        limits: { nodes: 6 },
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'd' },
            expireAfter: 'Never',
            terminationGracePeriod: '1h30m',
            requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 3 }],
            taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
            startupTaints: [{ key: 'init', effect: 'NoExecute' }],
          },
        },
        disruption: { consolidateAfter: 'Never', consolidationPolicy: 'WhenEmpty' },
      },
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
    });
    expect(r.ok && r.value).toMatchObject({
      uid: 'u',
      generation: 3,
      replicas: 4,
      ready: true,
      hash: '123',
      hashVersion: 'v3',
      limits: { nodes: 6 },
      template: {
        expireAfter: null,
        terminationGracePeriod: 1.5 * H,
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', values: [], minValues: 3 }],
        taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
        startupTaints: [{ key: 'init', effect: 'NoExecute' }],
      },
      disruption: { consolidateAfter: null, consolidationPolicy: 'WhenEmpty' },
    });
  });

  it('returns the validation errors of an invalid NodePool', () => {
    const r = parseNodePool(doc('guide-04.yaml'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.path)).toEqual(['spec.template.spec.nodeClassRef']);
  });
});

describe('parseNodeClaim', () => {
  it('reads spec and status', () => {
    const r = parseNodeClaim({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name: 'default-x',
        labels: { 'karpenter.sh/nodepool': 'default' },
        creationTimestamp: '2026-01-01T00:00:00Z',
      },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [{ key: 'karpenter.sh/nodepool', operator: 'In', values: ['default'] }],
        resources: { requests: { cpu: '1500m', pods: '2' } },
      },
      status: {
        nodeName: 'ip-1',
        providerID: 'aws:///us-east-1a/i-1',
        imageID: 'ami-1',
        capacity: { cpu: '2', memory: '8Gi' },
        allocatable: { cpu: '1930m' },
        lastPodEventTime: '2026-01-01T00:05:00Z',
        conditions: [
          { type: 'Initialized', status: 'True', lastTransitionTime: '2026-01-01T00:02:00Z' },
          { type: 'Drifted', status: 'True', reason: 'AMIDrift', lastTransitionTime: '2026-01-01T00:03:00Z' },
        ],
      },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toMatchObject({
      name: 'default-x',
      nodePoolName: 'default',
      requests: { cpu: 1500, pods: 2 },
      expireAfter: 720 * H,
      nodeName: 'ip-1',
      providerId: 'aws:///us-east-1a/i-1',
      imageId: 'ami-1',
      capacity: { cpu: 2000, memory: 8 * GI },
      allocatable: { cpu: 1930 },
      creationTimestamp: Date.parse('2026-01-01T00:00:00Z'),
      lastPodEventTime: Date.parse('2026-01-01T00:05:00Z'),
    });
    expect(conditionTrue(r.value.conditions, 'Initialized')).toBe(true);
    expect(r.value.conditions[1]).toEqual({
      type: 'Drifted',
      status: 'True',
      reason: 'AMIDrift',
      lastTransitionTime: Date.parse('2026-01-01T00:03:00Z'),
    });
  });
});

describe('parseEC2NodeClass', () => {
  it('reads guide-03 with its family from the alias and volume sizes in bytes', () => {
    const r = parseEC2NodeClass(doc('guide-03.yaml'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.amiFamily).toBe('AL2023');
    expect(r.value.alias).toEqual({ family: 'al2023', version: 'latest' });
    expect(r.value.spec.role).toBe('KarpenterNodeRole-my-cluster');
    expect(r.value.spec.blockDeviceMappings[0]).toMatchObject({
      deviceName: '/dev/xvda',
      rootVolume: false,
      ebs: { volumeSize: '100Gi', volumeSizeBytes: 100 * GI, iops: 3000 },
    });
    expect(r.value.spec.metadataOptions).toEqual({
      httpEndpoint: 'enabled',
      httpProtocolIPv6: 'disabled',
      httpPutResponseHopLimit: 2,
      httpTokens: 'required',
    });
    expect(r.value.spec.capacityReservationSelectorTerms).toEqual([]);
    expect(toNodeClass(r.value)).toEqual({
      group: 'karpenter.k8s.aws',
      kind: 'EC2NodeClass',
      name: 'default',
      ready: false,
      zones: [],
    });
  });

  it('defaults metadataOptions (hop limit 1) and derives readiness and zones from status', () => {
    const r = parseEC2NodeClass({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'n' },
      spec: {
        amiFamily: 'Bottlerocket',
        amiSelectorTerms: [{ tags: { a: '*' } }],
        instanceProfile: 'p',
        subnetSelectorTerms: [{ id: 'subnet-1' }],
        securityGroupSelectorTerms: [{ name: 'sg' }],
      },
      status: {
        subnets: [
          { id: 'subnet-1', zone: 'us-east-1b' },
          { id: 'subnet-2', zone: 'us-east-1a' },
          { id: 'subnet-3', zone: 'us-east-1b' },
        ],
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }],
      },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.spec.metadataOptions).toEqual({
      httpEndpoint: 'enabled',
      httpProtocolIPv6: 'disabled',
      httpPutResponseHopLimit: 1,
      httpTokens: 'required',
    });
    expect(r.value.amiFamily).toBe('Bottlerocket');
    expect(toNodeClass(r.value)).toEqual({
      group: 'karpenter.k8s.aws',
      kind: 'EC2NodeClass',
      name: 'n',
      ready: true,
      zones: ['us-east-1a', 'us-east-1b'],
    });
  });
});

describe('parseNode', () => {
  it('reads labels, taints, resources and readiness', () => {
    const r = parseNode({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'ip-1',
        labels: {
          'karpenter.sh/nodepool': 'default',
          'karpenter.sh/registered': 'true',
          'karpenter.sh/initialized': 'true',
        },
      },
      spec: {
        providerID: 'aws:///us-east-1a/i-1',
        unschedulable: true,
        taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
      },
      status: {
        capacity: { cpu: '2', memory: '8Gi', pods: '29' },
        allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' },
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
    expect(r.ok && r.value).toMatchObject({
      name: 'ip-1',
      providerId: 'aws:///us-east-1a/i-1',
      nodePoolName: 'default',
      unschedulable: true,
      ready: true,
      registered: true,
      initialized: true,
      taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
      capacity: { cpu: 2000, memory: 8 * GI, pods: 29 },
      allocatable: { cpu: 1930 },
    });
  });

  it('reports a bad condition status with its path', () => {
    const r = parseNode({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n' },
      status: { conditions: [{ type: 'Ready', status: 'yes' }] },
    });
    expect(!r.ok && r.errors.map(formatFieldError)).toEqual([
      expect.stringMatching(/^Node\/n: status\.conditions\[0\]\.status: "yes" is not allowed/),
    ]);
  });
});

describe('parseDaemonSet and parsePodDisruptionBudget', () => {
  const ds = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'kube-system', uid: 'ds-1' },
    spec: {
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: {
          containers: [{ name: 'a', image: 'x', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
          tolerations: [{ operator: 'Exists' }],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] },
                ],
              },
            },
          },
        },
      },
    },
  };

  it('synthesises the daemon pod from the template, owned by the DaemonSet', () => {
    const r = parseDaemonSet(ds);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.namespace).toBe('kube-system');
    expect(r.value.pod).toMatchObject({
      namespace: 'kube-system',
      labels: { app: 'agent' },
      requests: { cpu: 100, memory: 64 * 1024 ** 2, pods: 1 },
      owner: { kind: 'DaemonSet', name: 'agent', uid: 'ds-1' },
    });
    expect(r.value.pod.affinity?.nodeAffinity?.required?.[0]?.matchExpressions[0]?.key).toBe('kubernetes.io/os');
  });

  it('uses the newest pod but restores the template affinity the DaemonSet controller replaced', () => {
    const newest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'agent-x', namespace: 'kube-system' },
      spec: {
        containers: [{ name: 'a', image: 'x', resources: { requests: { cpu: '150m' } } }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }],
            },
          },
        },
      },
    };
    const r = parseDaemonSet(ds, { newestPod: newest });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.pod.requests.cpu).toBe(150);
    expect(r.value.pod.affinity?.nodeAffinity?.required?.[0]).toEqual({
      matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }],
    });
  });

  it('reads a PDB and rejects malformed budgets', () => {
    const r = parsePodDisruptionBudget({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'ns' },
      spec: {
        maxUnavailable: '25%',
        selector: { matchLabels: { app: 'web' } },
        unhealthyPodEvictionPolicy: 'AlwaysAllow',
      },
      status: { disruptionsAllowed: 2 },
    });
    expect(r.ok && r.value).toEqual({
      namespace: 'ns',
      name: 'web',
      selector: { matchLabels: { app: 'web' } },
      maxUnavailable: '25%',
      disruptionsAllowed: 2,
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    });
    const bad = parsePodDisruptionBudget({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'b' },
      spec: { minAvailable: 'half', maxUnavailable: 1 },
    });
    expect(!bad.ok && bad.errors.map((e) => e.path)).toEqual(['spec.minAvailable']);
  });
});

describe('parseText and parseObject', () => {
  it('parses every document, expands Lists and puts lines on errors', () => {
    const text = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata: {name: a}',
      'spec: {containers: [{name: c, image: x}]}',
      '---',
      '# empty document',
      '---',
      'apiVersion: v1',
      'kind: List',
      'items:',
      '- apiVersion: karpenter.sh/v1',
      '  kind: NodePool',
      '  metadata: {name: bad}',
      '  spec:',
      '    weight: 500',
      '    template:',
      '      spec:',
      '        nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: d}',
      '        requirements: []',
      '- apiVersion: apps/v1',
      '  kind: Deployment',
      '  metadata: {name: d}',
    ].join('\n');
    const entries = parseText(text);
    expect(entries.map((e) => [e.document, e.item, e.result.ok && e.result.value.kind])).toEqual([
      [1, undefined, 'Pod'],
      [3, 0, false],
      [3, 1, 'Other'],
    ]);
    const bad = entries[1]!;
    expect(bad.line).toBe(11);
    expect(!bad.result.ok && bad.result.errors.map((e) => [e.path, e.line])).toEqual([['spec.weight', 15]]);
  });

  it('reports YAML syntax errors with their line, per document', () => {
    const entries = parseText('a: 1\n---\nkind: Pod\n  bad: [\n');
    expect(entries).toHaveLength(2);
    expect(entries[0]!.result.ok).toBe(false);
    const second = entries[1]!.result;
    expect(!second.ok && second.errors[0]!.message).toMatch(/^YAML syntax: /);
    expect(!second.ok && second.errors[0]!.line).toBeGreaterThanOrEqual(3);
  });

  it('parses JSON, refuses objects without apiVersion and kind, and passes other kinds through', () => {
    const [pod] = parseText(
      '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"c"}]}}',
    );
    expect(pod!.result.ok && pod!.result.value.kind).toBe('Pod');
    const r = parseObject({ metadata: { name: 'x' } });
    expect(!r.ok && r.errors.map((e) => e.path)).toEqual(['apiVersion']);
    const other = parseObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } });
    expect(other.ok && other.value.kind).toBe('Other');
    const legacy = parseObject({ apiVersion: 'karpenter.sh/v1beta1', kind: 'NodePool', metadata: { name: 'o' } });
    expect(!legacy.ok && legacy.errors[0]!.message).toMatch(/no longer served/);
  });
});
