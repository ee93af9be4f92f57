// Table-driven EC2NodeClass, NodeClaim and old-API validation.
import { describe, expect, it } from 'vitest';
import { formatFieldError } from './errors.ts';
import { validateObject } from './validate.ts';

type Obj = Record<string, any>;

function ec2(): Obj {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: 'KarpenterNodeRole',
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c' } }],
    },
  };
}

function nodeClaim(): Obj {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: 'default-abcde', labels: { 'karpenter.sh/nodepool': 'default' } },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [
        { key: 'karpenter.sh/nodepool', operator: 'In', values: ['default'] },
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'c5.large'], minValues: 2 },
      ],
      resources: { requests: { cpu: '1500m', memory: '2Gi', pods: '3' } },
    },
  };
}

const check =
  (base: () => Obj) =>
  (mutate: (o: Obj) => void, path: string, message: RegExp): void => {
    const o = base();
    mutate(o);
    const errors = validateObject(o);
    expect(errors.map((e) => e.path)).toContain(path);
    expect(errors.filter((e) => e.path === path).map((e) => e.message)).toContainEqual(expect.stringMatching(message));
  };

describe('EC2NodeClass rules', () => {
  it('accepts the base fixture', () => {
    expect(validateObject(ec2())).toEqual([]);
  });

  const s = (f: (spec: Obj) => void) => (o: Obj) => f(o.spec);
  it.each<[string, (o: Obj) => void, string, RegExp]>([
    ['missing subnetSelectorTerms', s((x) => delete x.subnetSelectorTerms), 'spec.subnetSelectorTerms', /required/],
    [
      'empty subnetSelectorTerms',
      s((x) => (x.subnetSelectorTerms = [])),
      'spec.subnetSelectorTerms',
      /cannot be empty/,
    ],
    [
      'empty subnet term',
      s((x) => (x.subnetSelectorTerms = [{}])),
      'spec.subnetSelectorTerms[0]',
      /at least one of: tags, id, cidr/,
    ],
    [
      'subnet id with tags',
      s((x) => (x.subnetSelectorTerms = [{ id: 'subnet-1', tags: { a: 'b' } }])),
      'spec.subnetSelectorTerms[0].id',
      /'id' is mutually exclusive/,
    ],
    [
      'bad subnet id',
      s((x) => (x.subnetSelectorTerms = [{ id: 'subnet_1' }])),
      'spec.subnetSelectorTerms[0].id',
      /not a subnet id/,
    ],
    [
      'empty tag value',
      s((x) => (x.subnetSelectorTerms = [{ tags: { a: '' } }])),
      'spec.subnetSelectorTerms[0].tags[a]',
      /empty keys or values/,
    ],
    [
      '21 tags in a selector',
      s(
        (x) =>
          (x.subnetSelectorTerms = [
            { tags: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) },
          ]),
      ),
      'spec.subnetSelectorTerms[0].tags',
      /at most 20/,
    ],
    [
      '31 subnet terms',
      s((x) => (x.subnetSelectorTerms = Array.from({ length: 31 }, (_, i) => ({ id: `subnet-${i}` })))),
      'spec.subnetSelectorTerms',
      /at most 30/,
    ],
    [
      'empty security groups',
      s((x) => (x.securityGroupSelectorTerms = [])),
      'spec.securityGroupSelectorTerms',
      /cannot be empty/,
    ],
    [
      'sg name with id',
      s((x) => (x.securityGroupSelectorTerms = [{ name: 'a', id: 'sg-1' }])),
      'spec.securityGroupSelectorTerms[0].name',
      /'name' is mutually exclusive/,
    ],
    [
      'bad sg id',
      s((x) => (x.securityGroupSelectorTerms = [{ id: 'group-1' }])),
      'spec.securityGroupSelectorTerms[0].id',
      /not a security group id/,
    ],
    ['no ami terms', s((x) => (x.amiSelectorTerms = [])), 'spec.amiSelectorTerms', /at least one item/],
    [
      'alias without version',
      s((x) => (x.amiSelectorTerms = [{ alias: 'al2023' }])),
      'spec.amiSelectorTerms[0].alias',
      /form family@version/,
    ],
    [
      'unknown alias family',
      s((x) => (x.amiSelectorTerms = [{ alias: 'ubuntu@latest' }])),
      'spec.amiSelectorTerms[0].alias',
      /family is not supported; use one of: al2, al2023, bottlerocket, windows2019, windows2022, windows2025/,
    ],
    [
      'pinned windows alias',
      s((x) => (x.amiSelectorTerms = [{ alias: 'windows2022@v1' }])),
      'spec.amiSelectorTerms[0].alias',
      /only support the version 'latest'/,
    ],
    [
      'alias too long',
      s((x) => (x.amiSelectorTerms = [{ alias: `al2023@v${'1'.repeat(30)}` }])),
      'spec.amiSelectorTerms[0].alias',
      /at most 30/,
    ],
    [
      'alias with tags',
      s((x) => (x.amiSelectorTerms = [{ alias: 'al2023@latest', tags: { a: 'b' } }])),
      'spec.amiSelectorTerms[0].alias',
      /'alias' is mutually exclusive/,
    ],
    [
      'alias with another term',
      s((x) => (x.amiSelectorTerms = [{ alias: 'al2023@latest' }, { id: 'ami-1' }])),
      'spec.amiSelectorTerms',
      /must be the only amiSelectorTerm/,
    ],
    [
      'ami id with name',
      s((x) => (x.amiSelectorTerms = [{ id: 'ami-1', name: 'x' }])),
      'spec.amiSelectorTerms[0].id',
      /'id' is mutually exclusive/,
    ],
    ['bad ami id', s((x) => (x.amiSelectorTerms = [{ id: 'img-1' }])), 'spec.amiSelectorTerms[0].id', /not an AMI id/],
    [
      'empty ami term',
      s((x) => (x.amiSelectorTerms = [{ owner: 'self' }])),
      'spec.amiSelectorTerms[0]',
      /at least one of: tags, id, name, alias, ssmParameter/,
    ],
    [
      'no alias and no amiFamily',
      s((x) => (x.amiSelectorTerms = [{ id: 'ami-1' }])),
      'spec.amiFamily',
      /amiFamily is required/,
    ],
    [
      'amiFamily not matching the alias',
      s((x) => (x.amiFamily = 'AL2')),
      'spec.amiFamily',
      /must be 'AL2023' or 'Custom'/,
    ],
    [
      'unknown amiFamily',
      s((x) => (x.amiFamily = 'Ubuntu')),
      'spec.amiFamily',
      /use one of: AL2, AL2023, Bottlerocket, Custom, Windows2019, Windows2022, Windows2025/,
    ],
    [
      'role and instanceProfile',
      s((x) => (x.instanceProfile = 'p')),
      'spec',
      /exactly one of 'role' or 'instanceProfile'/,
    ],
    ['neither role nor instanceProfile', s((x) => delete x.role), 'spec', /exactly one of 'role' or 'instanceProfile'/],
    ['empty role', s((x) => (x.role = '')), 'spec.role', /cannot be empty/],
    [
      'cluster tag',
      s((x) => (x.tags = { 'kubernetes.io/cluster/prod': 'owned' })),
      'spec.tags[kubernetes.io/cluster/prod]',
      /restricted/,
    ],
    [
      'eks cluster tag',
      s((x) => (x.tags = { 'eks:eks-cluster-name': 'x' })),
      'spec.tags[eks:eks-cluster-name]',
      /restricted/,
    ],
    [
      'nodepool tag',
      s((x) => (x.tags = { 'karpenter.sh/nodepool': 'x' })),
      'spec.tags[karpenter.sh/nodepool]',
      /restricted/,
    ],
    [
      'two root volumes',
      s(
        (x) =>
          (x.blockDeviceMappings = [
            { rootVolume: true, ebs: { volumeSize: '20Gi' } },
            { rootVolume: true, ebs: { volumeSize: '20Gi' } },
          ]),
      ),
      'spec.blockDeviceMappings',
      /at most one block device mapping may be the root volume/,
    ],
    [
      'ebs without size or snapshot',
      s((x) => (x.blockDeviceMappings = [{ deviceName: '/dev/xvda', ebs: { volumeType: 'gp3' } }])),
      'spec.blockDeviceMappings[0].ebs',
      /snapshotID or a volumeSize/,
    ],
    [
      'volume size without unit',
      s((x) => (x.blockDeviceMappings = [{ ebs: { volumeSize: '100' } }])),
      'spec.blockDeviceMappings[0].ebs.volumeSize',
      /whole size in Gi/,
    ],
    [
      'volume too large',
      s((x) => (x.blockDeviceMappings = [{ ebs: { volumeSize: '70000Gi' } }])),
      'spec.blockDeviceMappings[0].ebs.volumeSize',
      /Gi \(1-59000\)/,
    ],
    [
      'unknown volume type',
      s((x) => (x.blockDeviceMappings = [{ ebs: { volumeSize: '20Gi', volumeType: 'gp4' } }])),
      'spec.blockDeviceMappings[0].ebs.volumeType',
      /use one of/,
    ],
    [
      'initialization rate without snapshot',
      s((x) => (x.blockDeviceMappings = [{ ebs: { volumeSize: '20Gi', volumeInitializationRate: 150 } }])),
      'spec.blockDeviceMappings[0].ebs',
      /needs a snapshotID/,
    ],
    [
      'initialization rate too low',
      s((x) => (x.blockDeviceMappings = [{ ebs: { snapshotID: 'snap-1', volumeInitializationRate: 50 } }])),
      'spec.blockDeviceMappings[0].ebs.volumeInitializationRate',
      /at least 100/,
    ],
    [
      'httpTokens enum',
      s((x) => (x.metadataOptions = { httpTokens: 'maybe' })),
      'spec.metadataOptions.httpTokens',
      /use one of: required, optional/,
    ],
    [
      'hop limit 65',
      s((x) => (x.metadataOptions = { httpPutResponseHopLimit: 65 })),
      'spec.metadataOptions.httpPutResponseHopLimit',
      /at most 64/,
    ],
    [
      'httpEndpoint on',
      s((x) => (x.metadataOptions = { httpEndpoint: 'on' })),
      'spec.metadataOptions.httpEndpoint',
      /enabled, disabled/,
    ],
    [
      'kubeReserved key',
      s((x) => (x.kubelet = { kubeReserved: { gpu: '1' } })),
      'spec.kubelet.kubeReserved[gpu]',
      /valid keys for kubeReserved are cpu, memory, ephemeral-storage, pid/,
    ],
    [
      'negative systemReserved',
      s((x) => (x.kubelet = { systemReserved: { cpu: '-100m' } })),
      'spec.kubelet.systemReserved[cpu]',
      /cannot be negative/,
    ],
    [
      'evictionHard signal',
      s((x) => (x.kubelet = { evictionHard: { 'disk.available': '10%' } })),
      'spec.kubelet.evictionHard[disk.available]',
      /valid keys for evictionHard/,
    ],
    [
      'evictionHard value',
      s((x) => (x.kubelet = { evictionHard: { 'memory.available': 'lots' } })),
      'spec.kubelet.evictionHard[memory.available]',
      /percentage such as 10% or a quantity/,
    ],
    [
      'evictionSoft without grace period',
      s((x) => (x.kubelet = { evictionSoft: { 'memory.available': '500Mi' } })),
      'spec.kubelet.evictionSoft[memory.available]',
      /no matching evictionSoftGracePeriod/,
    ],
    [
      'image GC thresholds',
      s((x) => (x.kubelet = { imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60 })),
      'spec.kubelet',
      /imageGCHighThresholdPercent must be greater/,
    ],
    ['negative maxPods', s((x) => (x.kubelet = { maxPods: -1 })), 'spec.kubelet.maxPods', /at least 0/],
    [
      'reservation id with owner',
      s((x) => (x.capacityReservationSelectorTerms = [{ id: 'cr-1', ownerID: '123456789012' }])),
      'spec.capacityReservationSelectorTerms[0].id',
      /mutually exclusive/,
    ],
    [
      'bad reservation id',
      s((x) => (x.capacityReservationSelectorTerms = [{ id: 'cr_1' }])),
      'spec.capacityReservationSelectorTerms[0].id',
      /not a capacity reservation id/,
    ],
    [
      'short owner id',
      s((x) => (x.capacityReservationSelectorTerms = [{ tags: { a: 'b' }, ownerID: '123' }])),
      'spec.capacityReservationSelectorTerms[0].ownerID',
      /12-digit/,
    ],
    [
      'reservation term with only an owner',
      s((x) => (x.capacityReservationSelectorTerms = [{ ownerID: '123456789012' }])),
      'spec.capacityReservationSelectorTerms[0]',
      /at least one of: tags, id, instanceMatchCriteria/,
    ],
    [
      'placement group by name and id',
      s((x) => (x.placementGroupSelector = { name: 'a', id: 'pg-1' })),
      'spec.placementGroupSelector',
      /exactly one of 'name' or 'id'/,
    ],
    [
      'no primary interface',
      s((x) => (x.networkInterfaces = [{ networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' }])),
      'spec.networkInterfaces',
      /primary interface/,
    ],
    [
      'duplicate interface',
      s(
        (x) =>
          (x.networkInterfaces = [
            { networkCardIndex: 0, deviceIndex: 0 },
            { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'efa-only' },
          ]),
      ),
      'spec.networkInterfaces[1]',
      /same networkCardIndex and deviceIndex/,
    ],
    ['instance store policy', s((x) => (x.instanceStorePolicy = 'RAID1')), 'spec.instanceStorePolicy', /RAID0/],
    [
      'v1alpha1 subnetSelector field',
      s((x) => (x.subnetSelector = { a: 'b' })),
      'spec.subnetSelector',
      /unknown field/,
    ],
  ])('reports %s at its field', (_n, mutate, path, message) => check(ec2)(mutate, path, message));

  it('accepts every documented field', () => {
    const o = ec2();
    Object.assign(o.spec, {
      amiFamily: 'Custom',
      userData: '#!/bin/bash',
      tags: { Team: 'a' },
      detailedMonitoring: true,
      associatePublicIPAddress: false,
      ipPrefixCount: 0,
      context: 'ctx',
      instanceStorePolicy: 'RAID0',
      capacityReservationSelectorTerms: [
        { id: 'cr-0123' },
        { tags: { a: 'b' }, ownerID: '123456789012', instanceMatchCriteria: 'open' },
      ],
      placementGroupSelector: { name: 'pg' },
      kubelet: {
        clusterDNS: ['10.0.0.10'],
        maxPods: 110,
        podsPerCore: 2,
        systemReserved: { cpu: '100m', pid: '1000' },
        kubeReserved: { memory: '1Gi' },
        evictionHard: { 'memory.available': '5%', 'nodefs.available': '1Gi' },
        evictionSoft: { 'memory.available': '500Mi' },
        evictionSoftGracePeriod: { 'memory.available': '1m30s' },
        evictionMaxPodGracePeriod: 60,
        imageGCHighThresholdPercent: 85,
        imageGCLowThresholdPercent: 80,
        cpuCFSQuota: true,
      },
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          rootVolume: true,
          ebs: {
            volumeSize: '100Gi',
            volumeType: 'gp3',
            iops: 3000,
            throughput: 125,
            encrypted: true,
            kmsKeyID: 'k',
            deleteOnTermination: true,
          },
        },
        { deviceName: '/dev/xvdb', ebs: { snapshotID: 'snap-1', volumeInitializationRate: 200 } },
        { ebs: { volumeSize: '2T' } },
      ],
      metadataOptions: {
        httpEndpoint: 'enabled',
        httpProtocolIPv6: 'disabled',
        httpPutResponseHopLimit: 2,
        httpTokens: 'required',
      },
      networkInterfaces: [
        { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
        { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' },
      ],
      connectionTracking: { tcpEstablishedTimeout: 3600, udpStreamTimeout: 120, udpTimeout: 30 },
      cpuOptions: { nestedVirtualization: 'enabled' },
    });
    o.spec.amiSelectorTerms = [{ alias: 'bottlerocket@v1.20.0' }];
    expect(validateObject(o).map(formatFieldError)).toEqual([]);
  });
});

describe('NodeClaim rules', () => {
  it('accepts a NodeClaim carrying its nodepool requirement (allowed on NodeClaims, not NodePools)', () => {
    expect(validateObject(nodeClaim())).toEqual([]);
  });
  const sp = (f: (spec: Obj) => void) => (o: Obj) => f(o.spec);
  it.each<[string, (o: Obj) => void, string, RegExp]>([
    [
      'hostname requirement',
      sp((x) => x.requirements.push({ key: 'kubernetes.io/hostname', operator: 'In', values: ['n'] })),
      'spec.requirements[2].key',
      /hostname" is restricted/,
    ],
    ['missing nodeClassRef', sp((x) => delete x.nodeClassRef), 'spec.nodeClassRef', /required/],
    ['missing requirements', sp((x) => delete x.requirements), 'spec.requirements', /required/],
    [
      'bad request',
      sp((x) => (x.resources.requests.memory = 'two gigs')),
      'spec.resources.requests[memory]',
      /not a quantity/,
    ],
    [
      'negative request',
      sp((x) => (x.resources.requests.cpu = '-1')),
      'spec.resources.requests[cpu]',
      /must not be negative/,
    ],
    [
      'In without values',
      sp((x) => (x.requirements[1] = { key: 'a', operator: 'In' })),
      'spec.requirements[1].values',
      /at least one value/,
    ],
    ['expireAfter', sp((x) => (x.expireAfter = '30d')), 'spec.expireAfter', /duration/],
    ['kubelet (moved to EC2NodeClass)', sp((x) => (x.kubelet = {})), 'spec.kubelet', /unknown field/],
    ['status capacity', (o) => (o.status = { capacity: { cpu: 'four' } }), 'status.capacity[cpu]', /not a quantity/],
    [
      'status condition',
      (o) =>
        (o.status = { conditions: [{ type: 'Ready', status: 'Yes', lastTransitionTime: '2026-01-01T00:00:00Z' }] }),
      'status.conditions[0].status',
      /True, False, Unknown/,
    ],
  ])('reports %s at its field', (_n, mutate, path, message) => check(nodeClaim)(mutate, path, message));
});

describe('older Karpenter APIs', () => {
  const messages = (o: Obj): string[] => validateObject(o).map(formatFieldError);

  it('explains Provisioner -> NodePool field by field', () => {
    const out = messages({
      apiVersion: 'karpenter.sh/v1alpha5',
      kind: 'Provisioner',
      metadata: { name: 'default' },
      spec: {
        requirements: [],
        ttlSecondsAfterEmpty: 30,
        ttlSecondsUntilExpired: 2592000,
        providerRef: { name: 'default' },
        kubeletConfiguration: {},
        labels: { a: 'b' },
      },
    });
    expect(out).toEqual(
      expect.arrayContaining([
        'Provisioner/default: apiVersion: Provisioner (karpenter.sh/v1alpha5) was replaced by NodePool (karpenter.sh/v1)',
        'Provisioner/default: spec.requirements: moved to spec.template.spec.requirements',
        'Provisioner/default: spec.ttlSecondsAfterEmpty: replaced by spec.disruption.consolidationPolicy: WhenEmpty with spec.disruption.consolidateAfter: 30s',
        'Provisioner/default: spec.ttlSecondsUntilExpired: replaced by spec.template.spec.expireAfter: 2592000s',
        expect.stringMatching(/spec\.providerRef: replaced by spec\.template\.spec\.nodeClassRef/),
        expect.stringMatching(/spec\.kubeletConfiguration: moved to the EC2NodeClass as spec\.kubelet/),
        'Provisioner/default: spec.labels: moved to spec.template.metadata.labels',
      ]),
    );
    expect(out).toHaveLength(7);
  });

  it('explains v1beta1 NodePool changes', () => {
    const out = messages({
      apiVersion: 'karpenter.sh/v1beta1',
      kind: 'NodePool',
      metadata: { name: 'p' },
      spec: {
        template: {
          spec: {
            kubelet: { maxPods: 10 },
            nodeClassRef: { apiVersion: 'karpenter.k8s.aws/v1beta1', kind: 'EC2NodeClass', name: 'd' },
            requirements: [],
          },
        },
        disruption: { consolidationPolicy: 'WhenUnderutilized', expireAfter: '720h' },
      },
    });
    expect(out).toEqual([
      'NodePool/p: apiVersion: NodePool karpenter.sh/v1beta1 is no longer served: use apiVersion karpenter.sh/v1',
      'NodePool/p: spec.disruption.expireAfter: moved to spec.template.spec.expireAfter: 720h',
      expect.stringMatching(
        /spec\.disruption\.consolidationPolicy: WhenUnderutilized was renamed: use consolidationPolicy: WhenEmptyOrUnderutilized \(and set consolidateAfter/,
      ),
      'NodePool/p: spec.template.spec.kubelet: moved to the EC2NodeClass as spec.kubelet',
      expect.stringMatching(/nodeClassRef\.apiVersion: replaced by nodeClassRef\.group \(karpenter\.k8s\.aws\)/),
    ]);
  });

  it('explains v1beta1 EC2NodeClass and v1alpha1 AWSNodeTemplate', () => {
    expect(
      messages({
        apiVersion: 'karpenter.k8s.aws/v1beta1',
        kind: 'EC2NodeClass',
        metadata: { name: 'e' },
        spec: { amiFamily: 'Ubuntu' },
      }),
    ).toEqual([
      'EC2NodeClass/e: apiVersion: EC2NodeClass karpenter.k8s.aws/v1beta1 is no longer served: use apiVersion karpenter.k8s.aws/v1',
      expect.stringMatching(/spec\.amiFamily: the Ubuntu family was removed in v1/),
    ]);
    const out = messages({
      apiVersion: 'karpenter.k8s.aws/v1alpha1',
      kind: 'AWSNodeTemplate',
      metadata: { name: 't' },
      spec: { subnetSelector: { a: 'b' }, launchTemplate: 'lt' },
    });
    expect(out[0]).toBe(
      'AWSNodeTemplate/t: apiVersion: AWSNodeTemplate (karpenter.k8s.aws/v1alpha1) was replaced by EC2NodeClass (karpenter.k8s.aws/v1)',
    );
    expect(out[1]).toMatch(/spec\.subnetSelector: replaced by spec\.subnetSelectorTerms/);
    expect(out[2]).toMatch(/spec\.launchTemplate: custom launch templates are not supported in v1/);
  });

  it('rejects unknown versions of our kinds, and leaves other kinds of our groups alone', () => {
    expect(messages({ apiVersion: 'karpenter.sh/v2', kind: 'NodePool', metadata: { name: 'p' } })).toEqual([
      expect.stringMatching(/^NodePool\/p: apiVersion: "karpenter.sh\/v2" is not an API version karpenter-ts serves/),
    ]);
    // NodeOverlay (karpenter.sh/v1alpha1) is one of ours now: checked against its CRD like the others.
    expect(
      messages({
        apiVersion: 'karpenter.sh/v1alpha1',
        kind: 'NodeOverlay',
        metadata: { name: 'o' },
        spec: { requirements: [] },
      }),
    ).toEqual([]);
    expect(
      messages({ apiVersion: 'karpenter.sh/v1alpha1', kind: 'NodeOverlay', metadata: { name: 'o' }, spec: {} }),
    ).toEqual(['NodeOverlay/o: spec.requirements: is required but missing']);
    expect(messages({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } })).toEqual([]);
    expect(messages({ apiVersion: 'karpenter.sh/v1', kind: 'Provisioner', metadata: { name: 'x' } })[0]).toMatch(
      /was replaced by NodePool/,
    );
  });
});
