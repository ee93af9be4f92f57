import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pod } from '../../test/fixtures/builders.ts';
import { compareQueueOrder, sortQueueOrder } from '../scheduling/pods.ts';
import { PodClassifier, PodShapes, samePodClass } from './classes.ts';

describe('pod classes', () => {
  it('puts replicas of one template in one class and tells apart pods that differ in any scheduling field', () => {
    const base = { cpu: '500m', memory: '1Gi', labels: { app: 'web' } };
    const variants = [
      pod({ ...base }),
      pod({ ...base, namespace: 'other' }),
      pod({ ...base, cpu: '501m' }),
      pod({ ...base, labels: { app: 'web', tier: 'a' } }),
      pod({ ...base, nodeSelector: { 'kubernetes.io/arch': 'arm64' } }),
      pod({ ...base, tolerations: [{ key: 'k', operator: 'Exists' }] }),
      pod({ ...base, hostPorts: [8080] }),
      pod({ ...base, required: [[{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }]] }),
      pod({ ...base, required: [[{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['b'] }]] }),
      pod({
        ...base,
        spread: [
          {
            maxSkew: 1,
            topologyKey: 'topology.kubernetes.io/zone',
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'web' } },
          },
        ],
      }),
      pod({ ...base, volumeRequirements: [[{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }]] }),
      { ...pod({ ...base }), ignoredReason: 'PVC data not found' },
      {
        ...pod({ ...base }),
        resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }],
        containerClaims: ['gpu'],
      },
      {
        ...pod({ ...base }),
        resourceClaims: [{ name: 'gpu', resourceClaimName: 'shared-gpu' }],
        containerClaims: ['gpu'],
      },
    ];
    const c = new PodClassifier();
    const classes = variants.map((p) => c.classOf(p));
    expect(new Set(classes).size).toBe(variants.length);
    // Replicas: new objects, same content, other names, uids and creation times.
    for (const [i, v] of variants.entries()) {
      const replica = structuredClone({
        ...v,
        name: `${v.name}-r`,
        uid: `${v.uid}-r`,
        creationTimestamp: v.creationTimestamp + 5,
      });
      expect(c.classOf(replica)).toBe(classes[i]);
    }
  });

  it('gives pods one shape exactly when they differ in nothing but requests', () => {
    const base = { cpu: '500m', memory: '1Gi', labels: { app: 'web' } };
    const variants = [
      pod({ ...base }),
      pod({ ...base, namespace: 'other' }),
      pod({ ...base, labels: { app: 'web', tier: 'a' } }),
      pod({ ...base, nodeSelector: { 'kubernetes.io/arch': 'arm64' } }),
      pod({ ...base, tolerations: [{ key: 'k', operator: 'Exists' }] }),
      pod({ ...base, hostPorts: [8080] }),
      pod({ ...base, required: [[{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }]] }),
      pod({
        ...base,
        spread: [
          {
            maxSkew: 1,
            topologyKey: 'topology.kubernetes.io/zone',
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'web' } },
          },
        ],
      }),
      pod({
        ...base,
        spread: [
          {
            maxSkew: 2,
            topologyKey: 'topology.kubernetes.io/zone',
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'web' } },
          },
        ],
      }),
      pod({ ...base, volumeRequirements: [[{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }]] }),
      { ...pod({ ...base }), ignoredReason: 'PVC data not found' },
      {
        ...pod({ ...base }),
        resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }],
        containerClaims: ['gpu'],
      },
    ];
    const s = new PodShapes();
    expect(new Set(variants.map((p) => s.shapeOf(p))).size).toBe(variants.length);
    for (const v of variants) {
      // Other sizes (new objects, not memoised by a classifier): the same shape, so the same representative.
      const resized = structuredClone({
        ...v,
        uid: `${v.uid}-big`,
        requests: { ...v.requests, cpu: 4000, memory: 2 ** 33 },
      });
      expect(s.shapeOf(resized)).toBe(s.shapeOf(v));
    }
  });

  it('answers each solve from its own pods: a representative remembered from an earlier solve only when present', () => {
    const a = pod({ cpu: '1', labels: { app: 'a' } });
    const a2 = pod({ cpu: '2', labels: { app: 'a' } });
    // Classified pods carry the memo (hashes, and the shape representative last matched).
    const classes = new PodClassifier();
    classes.classOf(a);
    classes.classOf(a2);
    const first = new PodShapes();
    expect(first.shapeOf(a)).toBe(a);
    expect(first.shapeOf(a2)).toBe(a);
    // The next solve has a2 but not a: a2 leads its shape there.
    expect(new PodShapes().shapeOf(a2)).toBe(a2);
    const third = new PodShapes();
    expect(third.shapeOf(a)).toBe(a);
    expect(third.shapeOf(a2)).toBe(a);
    expect(third.shapeOf(pod({ cpu: '1', labels: { app: 'b' } }))).not.toBe(a);
  });

  it('keeps what it remembers of a pod off its copies and out of its data, and classifies frozen pods too', () => {
    const a = pod({ cpu: '1', labels: { app: 'web' } });
    const b = pod({ cpu: '1', labels: { app: 'web' } });
    const first = new PodClassifier();
    expect([first.classOf(a), first.classOf(b)]).toEqual([0, 0]);
    // a copy with other labels is another class, though made from a pod with a memo
    const relabelled = { ...a, labels: { app: 'db' } };
    const frozen = Object.freeze({ ...b });
    const c = new PodClassifier();
    expect([c.classOf(a), c.classOf(relabelled), c.classOf(frozen), c.classOf(b)]).toEqual([0, 1, 0, 0]);
    expect(Object.getOwnPropertySymbols({ ...a })).toEqual([]);
    expect(Object.keys(a)).toEqual(Object.keys(relabelled));
    expect(JSON.parse(JSON.stringify(a))).toEqual(JSON.parse(JSON.stringify({ ...a })));
    expect(structuredClone(a)).toEqual({ ...a });
  });

  it('does not depend on hash collisions: equality decides', () => {
    // Same length, same first, middle and last characters: the hash cannot tell these labels apart.
    const a = pod({ labels: { app: 'axxxxa' } });
    const b = pod({ labels: { app: 'axyxxa' } });
    expect(samePodClass(a, b)).toBe(false);
    const c = new PodClassifier();
    expect(c.classOf(a)).not.toBe(c.classOf(b));
  });
});

describe('sortQueueOrder', () => {
  it('orders pods exactly as compareQueueOrder', () => {
    const arb = fc.array(
      fc.record({
        cpu: fc.constantFrom(0, 100, 250, 1000),
        mem: fc.constantFrom(0, 1, 2 ** 30, 1.5 * 2 ** 30),
        t: fc.integer({ min: 0, max: 3 }),
        uid: fc.string({ minLength: 1, maxLength: 3 }),
      }),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(arb, (specs) => {
        const pods = specs.map((s, i) => ({
          ...pod({ name: `p${i}`, createdAt: s.t }),
          uid: `${s.uid}-${i}`,
          requests: { cpu: s.cpu, memory: s.mem, pods: 1 },
        }));
        const want = [...pods].sort(compareQueueOrder).map((p) => p.uid);
        expect(sortQueueOrder(pods).map((p) => p.uid)).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });

  it('orders pods exactly as compareQueueOrder when sizes take more than 16 values', () => {
    const arb = fc.array(
      fc.record({
        cpu: fc.integer({ min: 0, max: 40 }),
        mem: fc.integer({ min: 0, max: 40 }),
        t: fc.integer({ min: 0, max: 3 }),
      }),
      { minLength: 20, maxLength: 80 },
    );
    fc.assert(
      fc.property(arb, (specs) => {
        const pods = specs.map((s, i) => ({
          ...pod({ name: `p${i}`, createdAt: s.t }),
          uid: `u-${(i * 7919) % 101}-${i}`,
          requests: { cpu: s.cpu * 50, memory: s.mem * 2 ** 20, pods: 1 },
        }));
        const want = [...pods].sort(compareQueueOrder).map((p) => p.uid);
        expect(sortQueueOrder(pods).map((p) => p.uid)).toEqual(want);
      }),
      { numRuns: 200 },
    );
  });

  it('orders pods exactly as compareQueueOrder when they are listed in creation order (many distinct times)', () => {
    const arb = fc.record({
      steps: fc.array(
        fc.record({
          cpu: fc.integer({ min: 0, max: 40 }),
          mem: fc.constantFrom(0, 1, 2 ** 30),
          gap: fc.constantFrom(0, 0, 1, 5),
        }),
        { minLength: 20, maxLength: 120 },
      ),
      manySizes: fc.boolean(),
    });
    fc.assert(
      fc.property(arb, ({ steps, manySizes }) => {
        let t = 0;
        const pods = steps.map((s, i) => {
          t += s.gap;
          const cpu = manySizes ? s.cpu * 50 : (s.cpu % 3) * 500;
          return {
            ...pod({ name: `p${i}`, createdAt: t }),
            uid: `u-${(i * 7919) % 101}-${i}`,
            requests: { cpu, memory: s.mem, pods: 1 },
          };
        });
        const want = [...pods].sort(compareQueueOrder).map((p) => p.uid);
        expect(sortQueueOrder(pods).map((p) => p.uid)).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });
});
