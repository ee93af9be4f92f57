// Karpenter core pkg/controllers/capacitybuffer/helpers_test.go and pkg/state/virtualpods/utilities_test.go
// (main at 2266468): the replica arithmetic and the virtual pods, on the engine's functions.
import { describe, expect, it } from 'vitest';
import {
  bufferOf,
  bufferReplicas,
  limitReplicas,
  parseCapacityBuffer,
  percentageReplicas,
  sanitizeVirtualPodSpec,
  virtualPods,
  type CapacityBuffer,
} from './capacitybuffer.ts';
import { parsePod } from './pod.ts';

const requestsOf = (spec: Record<string, unknown>) => {
  const r = parsePod({ metadata: { name: 'p' }, spec });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value.requests;
};
const c = (name: string, requests: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  name,
  image: 'x',
  resources: { requests },
  ...extra,
});

const cb = (spec: Partial<CapacityBuffer> = {}): CapacityBuffer => ({
  namespace: 'ns',
  name: 'buf',
  uid: 'u',
  provisioningStrategy: 'buffer.x-k8s.io/active-capacity',
  ...spec,
});

describe('Helpers', () => {
  describe('calculateLimitReplicas', () => {
    it('should calculate replicas based on CPU limits', () => {
      expect(limitReplicas({ cpu: 10_000 }, requestsOf({ containers: [c('a', { cpu: '2' })] }))).toBe(5);
    });
    it('should calculate replicas based on memory limits', () => {
      expect(limitReplicas({ memory: 8 * 2 ** 30 }, requestsOf({ containers: [c('a', { memory: '2Gi' })] }))).toBe(4);
    });
    it('should take the minimum across multiple resources', () => {
      const r = requestsOf({ containers: [c('a', { cpu: '1', memory: '4Gi' })] });
      expect(limitReplicas({ cpu: 10_000, memory: 8 * 2 ** 30 }, r)).toBe(2);
    });
    it('should sum requests across multiple containers', () => {
      const r = requestsOf({ containers: [c('a', { cpu: '1' }), c('b', { cpu: '1' })] });
      expect(limitReplicas({ cpu: 10_000 }, r)).toBe(5);
    });
    it('should use init container max if larger than sum of containers', () => {
      const r = requestsOf({ initContainers: [c('i', { cpu: '5' })], containers: [c('a', { cpu: '1' })] });
      expect(limitReplicas({ cpu: 10_000 }, r)).toBe(2);
    });
    it('should use container sum if larger than init containers', () => {
      const r = requestsOf({
        initContainers: [c('i', { cpu: '1' })],
        containers: [c('a', { cpu: '2' }), c('b', { cpu: '3' })],
      });
      expect(limitReplicas({ cpu: 10_000 }, r)).toBe(2);
    });
    it('should return false when pod has no resource requests', () => {
      expect(limitReplicas({ cpu: 10_000 }, requestsOf({ containers: [{ name: 'a', image: 'x' }] }))).toBeUndefined();
    });
    it('should return false when no limit resources match pod requests', () => {
      expect(
        limitReplicas({ 'nvidia.com/gpu': 4 }, requestsOf({ containers: [c('a', { cpu: '1' })] })),
      ).toBeUndefined();
    });
    it('should floor divide (no rounding up)', () => {
      expect(limitReplicas({ cpu: 5_000 }, requestsOf({ containers: [c('a', { cpu: '2' })] }))).toBe(2);
    });
    it('should handle millicore-level precision', () => {
      expect(limitReplicas({ cpu: 1_000 }, requestsOf({ containers: [c('a', { cpu: '333m' })] }))).toBe(3);
    });
    it('should return 0 when limit is smaller than a single pod request', () => {
      expect(limitReplicas({ cpu: 500 }, requestsOf({ containers: [c('a', { cpu: '1' })] }))).toBe(0);
    });
  });

  describe('totalPodRequests', () => {
    it('should sum sidecar init containers with regular containers', () => {
      const r = requestsOf({
        initContainers: [c('s', { cpu: '1' }, { restartPolicy: 'Always' })],
        containers: [c('a', { cpu: '2' })],
      });
      expect(r['cpu']).toBe(3000);
    });
    it('should not treat init containers without restartPolicy as sidecars', () => {
      const r = requestsOf({ initContainers: [c('i', { cpu: '1' })], containers: [c('a', { cpu: '2' })] });
      expect(r['cpu']).toBe(2000);
    });
  });

  describe('calculatePercentageReplicas', () => {
    it('should calculate percentage and ceil', () => expect(percentageReplicas(10, 20)).toBe(2));
    it('should ceil fractional results', () => expect(percentageReplicas(10, 15)).toBe(2));
    it('should return at least 1 when percentage > 0 and replicas > 0', () => expect(percentageReplicas(1, 1)).toBe(1));
    it('should return 0 when scalable has 0 replicas', () => expect(percentageReplicas(0, 50)).toBe(0));
    it('should return 0 when percentage is 0', () => expect(percentageReplicas(10, 0)).toBe(0));
    it('should handle 100 percent', () => expect(percentageReplicas(7, 100)).toBe(7));
    it('should handle large percentages (>100)', () => expect(percentageReplicas(4, 250)).toBe(10));
    it('should handle large replica counts', () => expect(percentageReplicas(100_000, 33)).toBe(33_000));
  });

  describe('computeReplicas', () => {
    const one = requestsOf({ containers: [c('a', { cpu: '1' })] });
    it('takes the larger of replicas and percentage', () => {
      expect(bufferReplicas(cb({ replicas: 5, percentage: 20 }), one, 10)).toBe(5);
      expect(bufferReplicas(cb({ replicas: 1, percentage: 50 }), one, 10)).toBe(5);
    });
    it('caps with limits, and uses limits alone when neither replicas nor percentage is set', () => {
      expect(bufferReplicas(cb({ replicas: 8, limits: { cpu: 3_000 } }), one)).toBe(3);
      expect(bufferReplicas(cb({ limits: { cpu: 6_000 } }), one)).toBe(6);
    });
    it('ignores limits that name no resource the pod requests, and percentage without a scalable', () => {
      expect(bufferReplicas(cb({ replicas: 4, limits: { 'nvidia.com/gpu': 1 } }), one)).toBe(4);
      expect(bufferReplicas(cb({ percentage: 50 }), one)).toBe(0);
    });
  });
});

describe('buildVirtualPods', () => {
  const template = {
    metadata: { labels: { app: 'web' } },
    spec: { containers: [c('a', { cpu: '1' })], nodeName: 'pinned' },
  };
  it('should create the correct number of pods with expected metadata', () => {
    const r = virtualPods(cb(), template, 3, 1000);
    expect(r.ok).toBe(true);
    const pods = r.ok ? r.value : [];
    expect(pods.map((p) => [p.name, p.namespace, p.uid])).toEqual([
      ['capacity-buffer-buf-1', 'ns', 'u-1'],
      ['capacity-buffer-buf-2', 'ns', 'u-2'],
      ['capacity-buffer-buf-3', 'ns', 'u-3'],
    ]);
    expect(pods[0]).toMatchObject({ labels: { app: 'web' }, unschedulable: true, priority: -2147483648 });
    expect(pods[0]!.nodeName).toBeUndefined();
    expect(bufferOf(pods[0]!)).toBe('ns/buf');
  });
  it('should produce deterministic UIDs across calls', () => {
    const a = virtualPods(cb(), template, 2, 1000);
    const b = virtualPods(cb(), template, 2, 1000);
    expect(a).toEqual(b);
  });
  it('should return nil for zero replicas', () => {
    expect(virtualPods(cb(), template, 0, 0)).toEqual({ ok: true, value: [] });
  });
  it('names the buffer and the field when the template makes no pod', () => {
    const r = virtualPods(cb(), { spec: { containers: [] } }, 1, 0);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors[0]!.object).toBe('CapacityBuffer/ns/buf');
      expect(r.errors[0]!.message).toMatch(/spec\.containers must list at least one container/);
    }
  });
  it('tells real pods from virtual ones', () => {
    const real = parsePod({ metadata: { name: 'p' }, spec: { containers: [c('a', {})] } });
    expect(real.ok && bufferOf(real.value)).toBeUndefined();
  });
});

describe('sanitizeVirtualPodSpec', () => {
  it('should drop both PVC and ephemeral volumes together, and their mounts', () => {
    const out = sanitizeVirtualPodSpec({
      volumes: [
        { name: 'pvc', persistentVolumeClaim: { claimName: 'x' } },
        { name: 'eph', ephemeral: {} },
        { name: 'cm', configMap: { name: 'cm' } },
      ],
      initContainers: [{ name: 'i', volumeMounts: [{ name: 'eph' }, { name: 'cm' }] }],
      containers: [{ name: 'a', volumeMounts: [{ name: 'pvc' }, { name: 'cm' }] }],
    });
    expect(out['volumes']).toEqual([{ name: 'cm', configMap: { name: 'cm' } }]);
    expect(out['containers']).toEqual([{ name: 'a', volumeMounts: [{ name: 'cm' }] }]);
    expect(out['initContainers']).toEqual([{ name: 'i', volumeMounts: [{ name: 'cm' }] }]);
  });
  it('should preserve tolerations, nodeSelector, and affinity', () => {
    const spec = {
      tolerations: [{ key: 'k', operator: 'Exists' }],
      nodeSelector: { a: 'b' },
      affinity: { nodeAffinity: {} },
      containers: [],
    };
    expect(sanitizeVirtualPodSpec(spec)).toMatchObject(spec);
  });
});

describe('parseCapacityBuffer', () => {
  it('reads the spec after admission, with the default strategy', () => {
    const r = parseCapacityBuffer({
      apiVersion: 'autoscaling.x-k8s.io/v1beta1',
      kind: 'CapacityBuffer',
      metadata: { name: 'b', namespace: 'ns', uid: 'x' },
      spec: { scalableRef: { kind: 'Deployment', name: 'd' }, percentage: 10, limits: { cpu: '2' } },
    });
    expect(r).toEqual({
      ok: true,
      value: {
        namespace: 'ns',
        name: 'b',
        uid: 'x',
        provisioningStrategy: 'buffer.x-k8s.io/active-capacity',
        scalableRef: { apiGroup: '', kind: 'Deployment', name: 'd' },
        percentage: 10,
        limits: { cpu: 2000 },
      },
    });
  });
  it('names the field of a bad spec', () => {
    const r = parseCapacityBuffer({
      apiVersion: 'autoscaling.x-k8s.io/v1beta1',
      kind: 'CapacityBuffer',
      metadata: { name: 'b', namespace: 'ns' },
      spec: { scalableRef: { kind: 'Deployment', name: 'd' }, percentage: -1 },
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.path)).toContain('spec.percentage');
  });
});
