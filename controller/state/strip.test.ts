import { describe, expect, it } from 'vitest';
import { parseNode, parsePod } from '../../engine/index.ts';
import type { KubeObject } from '../operator/kube.ts';
import { stripMetadata, stripNode, stripNodeClaim, stripPod } from './strip.ts';

const T = '2025-01-01T00:00:00Z';

function fullPod(): KubeObject {
  // managedFields: not in our ObjectMeta type (nothing reads it), but API servers send it.
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-1',
      namespace: 'default',
      uid: 'u1',
      resourceVersion: '7',
      creationTimestamp: T,
      labels: { app: 'web' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":true}', keep: 'me' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true }],
      managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
    },
    spec: {
      nodeName: 'node-1',
      schedulerName: 'default-scheduler',
      dnsPolicy: 'ClusterFirst',
      securityContext: {},
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
      priority: 10,
      tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      containers: [
        {
          name: 'app',
          image: 'example/web:1',
          command: ['serve'],
          env: [{ name: 'A', value: 'b' }],
          livenessProbe: { httpGet: { path: '/', port: 80 } },
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1' } },
        },
      ],
      initContainers: [
        {
          name: 'sidecar',
          image: 'example/proxy:1',
          restartPolicy: 'Always',
          resources: { requests: { cpu: '100m' } },
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: '10.0.0.1',
      podIPs: [{ ip: '10.0.0.1' }],
      hostIP: '10.1.0.1',
      startTime: T,
      qosClass: 'Burstable',
      conditions: [
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: T },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: T },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: T },
      ],
      containerStatuses: [
        {
          name: 'app',
          image: 'example/web:1',
          ready: true,
          state: { running: { startedAt: T } },
          allocatedResources: { cpu: '500m', memory: '1Gi' },
        },
      ],
    },
  } as KubeObject;
}

describe('informer cache transforms', () => {
  it('drops managed fields and the last-applied annotation from any object, and keeps the rest', () => {
    const o = stripMetadata(fullPod());
    expect(o.metadata).not.toHaveProperty('managedFields');
    expect(o.metadata.annotations).toEqual({ keep: 'me' });
    expect((o.spec as { containers: unknown[] }).containers[0]).toHaveProperty('image');
  });

  it('drops what no part of the controller reads from a pod; the engine parses it to the same Pod', () => {
    const before = parsePod(stripMetadata(fullPod()));
    const o = stripPod(fullPod());
    const spec = o.spec as {
      containers: Array<Record<string, unknown>>;
      initContainers: Array<Record<string, unknown>>;
    };
    expect(Object.keys(spec.containers[0]!).sort()).toEqual(['name', 'ports', 'resources']);
    expect(Object.keys(spec.initContainers[0]!).sort()).toEqual(['name', 'resources', 'restartPolicy']);
    expect(Object.keys(o.spec!).sort()).toEqual([
      'containers',
      'initContainers',
      'nodeName',
      'priority',
      'terminationGracePeriodSeconds',
      'tolerations',
      'volumes',
    ]);
    expect(o.status).toEqual({
      phase: 'Running',
      startTime: T,
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: T },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: T },
      ],
      containerStatuses: [{ name: 'app', allocatedResources: { cpu: '500m', memory: '1Gi' } }],
    });
    expect(o.metadata).not.toHaveProperty('managedFields');
    expect(before.ok).toBe(true);
    expect(parsePod(o)).toEqual(before);
  });

  it('copies a pod: the object the list or watch delivered is left as it was, and two strips are equal', () => {
    const input = fullPod();
    const copy = structuredClone(input);
    const a = stripPod(input);
    const b = stripPod(input);
    expect(input).toEqual(copy);
    expect(a).toEqual(b);
    expect(a.metadata.ownerReferences).not.toBe(input.metadata.ownerReferences);
    expect(a.metadata.labels).not.toBe(input.metadata.labels);
    expect(a.metadata.ownerReferences).toEqual(input.metadata.ownerReferences);
  });

  it("shares the parts a workload's pods have alike, and each pod still reads as it was delivered", () => {
    const pod = (name: string, app: string): KubeObject => {
      const o = fullPod();
      o.metadata = { ...o.metadata, name, uid: `uid-${name}`, labels: { app } };
      return o;
    };
    const a = stripPod(pod('web-1', 'web'));
    const b = stripPod(pod('web-2', 'web'));
    const c = stripPod(pod('db-1', 'db'));
    const spec = (o: KubeObject) => o.spec as Record<string, unknown>;
    expect(b.metadata.labels).toBe(a.metadata.labels);
    expect(b.metadata.ownerReferences).toBe(a.metadata.ownerReferences);
    expect(spec(b)['tolerations']).toBe(spec(a)['tolerations']);
    expect(spec(b)['containers']).toBe(spec(a)['containers']);
    expect(spec(b)['initContainers']).toBe(spec(a)['initContainers']);
    expect(c.metadata.labels).not.toBe(a.metadata.labels);
    expect(c.metadata.labels).toEqual({ app: 'db' });
    expect(spec(c)['containers']).toBe(spec(a)['containers']);
    // What a pod's record is parsed from is what the unshared copy gave: the same Pod, name and uid its own.
    for (const [o, name, app] of [
      [a, 'web-1', 'web'],
      [b, 'web-2', 'web'],
      [c, 'db-1', 'db'],
    ] as const) {
      const alone = parsePod(stripMetadata(pod(name, app)));
      expect(alone.ok).toBe(true);
      expect(parsePod(o)).toEqual(alone);
    }
  });

  it("drops the kubelet's reports nothing reads from a node; the engine parses it to the same node", () => {
    const node = (): KubeObject =>
      ({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name: 'ip-10-0-0-1',
          uid: 'n1',
          resourceVersion: '9',
          labels: { 'kubernetes.io/hostname': 'ip-10-0-0-1', 'node.kubernetes.io/instance-type': 'm5.large' },
          annotations: { 'karpenter.sh/nodepool-hash': '1' },
          managedFields: [{ manager: 'kubelet', operation: 'Update' }],
        },
        spec: { providerID: 'aws:///us-west-2a/i-1', taints: [{ key: 'k', effect: 'NoSchedule' }] },
        status: {
          capacity: { cpu: '2', memory: '8Gi', pods: '29' },
          allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' },
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'kubelet is posting ready status',
              lastHeartbeatTime: T,
              lastTransitionTime: T,
            },
            { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', lastTransitionTime: T },
          ],
          images: [{ names: ['registry/app@sha256:abc', 'registry/app:1'], sizeBytes: 123 }],
          nodeInfo: { kubeletVersion: 'v1.32.0', osImage: 'Linux', machineID: 'm', bootID: 'b' },
          addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
          volumesInUse: ['kubernetes.io/csi/ebs^vol-1'],
          volumesAttached: [{ name: 'kubernetes.io/csi/ebs^vol-1', devicePath: '' }],
          features: { supplementalGroupsPolicy: true },
        },
      }) as KubeObject;
    const input = node();
    const o = stripNode(input);
    expect(input).toEqual(node());
    expect(o.metadata).not.toHaveProperty('managedFields');
    expect(o.metadata.labels).toEqual(input.metadata.labels);
    expect(o.metadata.annotations).toEqual(input.metadata.annotations);
    expect(o.spec).toEqual(input.spec);
    expect(o.status).toEqual({
      capacity: { cpu: '2', memory: '8Gi', pods: '29' },
      allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastTransitionTime: T,
        },
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', lastTransitionTime: T },
      ],
      features: { supplementalGroupsPolicy: true },
    });
    const before = parseNode(stripMetadata(node()));
    expect(before.ok).toBe(true);
    expect(parseNode(o)).toEqual(before);
    // A node with no status (a Node created before its kubelet reported) is left as stripMetadata leaves it.
    const bare = { ...node(), status: undefined } as KubeObject;
    expect(stripNode(bare)).toEqual(stripMetadata(bare));
  });

  it('makes equal Node and NodeClaim conditions one copy; a condition that differs, has no time or nests stays its own', () => {
    const cond = (o: Record<string, unknown> = {}) => ({
      type: 'Ready',
      status: 'True',
      reason: 'Ready',
      message: '',
      lastTransitionTime: '2025-01-01T00:00:43Z',
      observedGeneration: 1,
      ...o,
    });
    const claim = (conditions: unknown[]): KubeObject => ({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'nc' },
      status: { conditions },
    });
    const conds = (o: KubeObject) => o.status!['conditions'] as unknown[];
    const a = stripNodeClaim(claim([cond(), cond({ type: 'Launched' }), cond({ lastTransitionTime: undefined })]));
    const b = stripNodeClaim(claim([cond(), cond({ type: 'Launched' }), cond({ lastTransitionTime: undefined })]));
    expect(conds(b)[0]).toBe(conds(a)[0]);
    expect(conds(b)[1]).toBe(conds(a)[1]);
    expect(conds(b)[2]).not.toBe(conds(a)[2]);
    expect(conds(b)).toEqual(conds(a));
    const other = stripNodeClaim(claim([cond({ observedGeneration: 2 }), cond({ extra: { nested: true } })]));
    expect(conds(other)[0]).not.toBe(conds(a)[0]);
    expect(conds(other)[0]).toEqual(cond({ observedGeneration: 2 }));
    const nested = stripNodeClaim(claim([cond({ extra: { nested: true } })]));
    expect(conds(nested)[0]).not.toBe(conds(other)[1]);
    // A Node's condition, lastHeartbeatTime dropped, is the NodeClaim's equal one.
    const n = stripNode({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n' },
      status: { conditions: [{ ...cond(), lastHeartbeatTime: '2025-01-01T00:09:00Z' }] },
    });
    expect(conds(n)[0]).toBe(conds(a)[0]);
  });

  it('makes the top-level objects of a stripped NodeClaim plain objects with the fields in their order', () => {
    const meta = {
      name: 'nc',
      uid: 'u',
      generateName: 'g-',
      resourceVersion: '1',
      creationTimestamp: T,
      generation: 1,
    };
    const given: KubeObject = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: meta,
      spec: {
        expireAfter: 'Never',
        requirements: [],
        resources: {},
        nodeClassRef: { group: 'g', kind: 'k', name: 'n' },
        taints: [],
      },
      status: { providerID: 'p', nodeName: 'n', imageID: 'i', capacity: {}, allocatable: {}, conditions: [] },
    };
    const copies = [stripNodeClaim(structuredClone(given)), stripNodeClaim(structuredClone(given))];
    for (const o of copies) {
      for (const part of [o, o.metadata, o.spec!, o.status!]) {
        expect(Object.getPrototypeOf(part)).toBe(Object.prototype);
        expect(part.constructor).toBe(Object);
      }
      expect(Object.keys(o.metadata)).toEqual(Object.keys(meta));
      expect(o).toStrictEqual(given);
      expect(structuredClone(o)).toStrictEqual(given);
      expect(JSON.parse(JSON.stringify(o))).toStrictEqual(given);
    }
  });
});
