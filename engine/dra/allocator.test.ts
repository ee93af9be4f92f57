import { describe, expect, it } from 'vitest';
import { parseDeviceClass, parseResourceClaim, parseResourceSlice } from '../api/dra.ts';
import type { Result } from '../api/errors.ts';
import type { DraState, ResourceClaim, ResourceSlice } from '../domain/dra.ts';
import { EMPTY_DRA } from '../domain/dra.ts';
import type { InstanceType } from '../domain/types.ts';
import { fromLabels } from '../scheduling/requirements.ts';
import { DeviceAllocator, type PodClaim } from './allocator.ts';
import { deviceTemplatesOf, NVIDIA_DRA_DRIVER } from './templates.ts';

const must = <T>(r: Result<T>): T => {
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
};
const API = 'resource.k8s.io/v1';
const cls = must(
  parseDeviceClass({
    apiVersion: API,
    kind: 'DeviceClass',
    metadata: { name: 'gpu' },
    spec: { selectors: [{ cel: { expression: 'device.driver == "d"' } }] },
  }),
);
const slice = (spec: Record<string, unknown>, name = 's'): ResourceSlice =>
  must(
    parseResourceSlice({
      apiVersion: API,
      kind: 'ResourceSlice',
      metadata: { name },
      spec: { driver: 'd', pool: { name: 'p', generation: 1, resourceSliceCount: 1 }, ...spec },
    }),
  );
let claims = 0;
const claim = (requests: unknown[], status?: unknown): ResourceClaim =>
  must(
    parseResourceClaim({
      apiVersion: API,
      kind: 'ResourceClaim',
      metadata: { name: `c${claims++}` },
      spec: { devices: { requests } },
      ...(status ? { status } : {}),
    }),
  );
const asPodClaim = (c: ResourceClaim): PodClaim => ({
  key: `default/${c.name}`,
  requests: c.requests,
  ...(c.allocation ? { allocated: c.allocation.devices } : {}),
});
const state = (o: Partial<DraState>): DraState => ({ ...EMPTY_DRA, deviceClasses: [cls], ...o });

describe('DeviceAllocator', () => {
  it('searches assignments exhaustively: a first-fit pick that starves a later request is undone', () => {
    const s = slice({
      allNodes: true,
      devices: [
        { name: 'big', attributes: { size: { int: 2 } } },
        { name: 'small', attributes: { size: { int: 1 } } },
      ],
    });
    const a = new DeviceAllocator(state({ resourceSlices: [s] }));
    const c = claim([
      { name: 'any', exactly: { deviceClassName: 'gpu' } },
      {
        name: 'big',
        exactly: { deviceClassName: 'gpu', selectors: [{ cel: { expression: 'device.attributes["d"].size == 2' } }] },
      },
    ]);
    const r = a.allocate([asPodClaim(c)], a.reachable('n', fromLabels({})), 'n', fromLabels({}));
    expect(r.ok && r.picks.map((p) => `${p.request}=${p.ref.device.name}`)).toEqual(['any=small', 'big=big']);
  });

  it('honours shared counters: devices drawing on one counter set cannot all be allocated', () => {
    const s = slice({
      allNodes: true,
      sharedCounters: [{ name: 'mem', counters: { memory: { value: '40Gi' } } }],
      devices: ['a', 'b', 'c'].map((name) => ({
        name,
        consumesCounters: [{ counterSet: 'mem', counters: { memory: { value: '20Gi' } } }],
      })),
    });
    const a = new DeviceAllocator(state({ resourceSlices: [s] }));
    const two = claim([{ name: 'r', exactly: { deviceClassName: 'gpu', count: 2 } }]);
    const three = claim([{ name: 'r', exactly: { deviceClassName: 'gpu', count: 3 } }]);
    const reach = a.reachable(undefined, fromLabels({}));
    expect(a.allocate([asPodClaim(two)], reach, undefined, fromLabels({})).ok).toBe(true);
    const r3 = a.allocate([asPodClaim(three)], reach, undefined, fromLabels({}));
    expect(r3.ok).toBe(false);
    const r2 = a.allocate([asPodClaim(two)], reach, undefined, fromLabels({}));
    a.commit(r2.ok ? r2.picks : []);
    // The claim allocated here counts as allocated for its other consumers; a new claim finds the counters spent.
    expect(a.allocate([asPodClaim(two)], [], undefined, fromLabels({})).ok).toBe(true);
    expect(
      a.allocate(
        [asPodClaim(claim([{ name: 'r', exactly: { deviceClassName: 'gpu' } }]))],
        reach,
        undefined,
        fromLabels({}),
      ).ok,
    ).toBe(false);
  });

  it('allocates every matching device in All mode, and only the newest pool generation', () => {
    const old = {
      ...slice({ allNodes: true, devices: [{ name: 'x' }, { name: 'y' }, { name: 'z' }] }, 'old'),
      pool: { name: 'p', generation: 0, resourceSliceCount: 1 },
    };
    const a = new DeviceAllocator(
      state({ resourceSlices: [old, slice({ allNodes: true, devices: [{ name: 'x' }, { name: 'y' }] })] }),
    );
    const r = a.allocate(
      [asPodClaim(claim([{ name: 'r', exactly: { deviceClassName: 'gpu', allocationMode: 'All' } }]))],
      a.reachable(undefined, fromLabels({})),
      undefined,
      fromLabels({}),
    );
    expect(r.ok && r.picks.map((p) => p.ref.device.name)).toEqual(['x', 'y']);
  });

  it('counts what allocated claims hold, and keeps node-local devices to their node', () => {
    const s = slice({ nodeName: 'n1', devices: [{ name: 'g0' }, { name: 'g1' }] });
    const held = claim([{ name: 'r', exactly: { deviceClassName: 'gpu' } }], {
      allocation: { devices: { results: [{ request: 'r', driver: 'd', pool: 'p', device: 'g0' }] } },
      reservedFor: [{ uid: 'u' }],
    });
    const a = new DeviceAllocator(state({ resourceSlices: [s], resourceClaims: [held] }));
    const want = asPodClaim(claim([{ name: 'r', exactly: { deviceClassName: 'gpu', count: 2 } }]));
    expect(a.allocate([want], a.reachable('n1', fromLabels({})), 'n1', fromLabels({})).ok).toBe(false);
    const one = asPodClaim(claim([{ name: 'r', exactly: { deviceClassName: 'gpu' } }]));
    const r = a.allocate([one], a.reachable('n1', fromLabels({})), 'n1', fromLabels({}));
    expect(r.ok && r.picks.map((p) => p.ref.device.name)).toEqual(['g1']);
    expect(a.reachable('n2', fromLabels({}))).toEqual([]);
    // The holder itself may run only where its device is.
    expect(a.allocate([asPodClaim(held)], [], 'n2', fromLabels({})).ok).toBe(false);
    expect(a.allocate([asPodClaim(held)], [], 'n1', fromLabels({})).ok).toBe(true);
  });

  it('narrows requirements to a slice node selector it allocates from', () => {
    const s = slice({
      nodeSelector: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['z1'] }] },
        ],
      },
      devices: [{ name: 'g0' }],
    });
    const a = new DeviceAllocator(state({ resourceSlices: [s] }));
    const one = asPodClaim(claim([{ name: 'r', exactly: { deviceClassName: 'gpu' } }]));
    const open = new Map([
      [
        'topology.kubernetes.io/zone',
        { key: 'topology.kubernetes.io/zone', complement: false, values: new Set(['z1', 'z2']) },
      ],
    ]);
    const r = a.allocate([one], a.reachable(undefined, open), undefined, open);
    expect(r.ok && [...r.requirements.get('topology.kubernetes.io/zone')!.values]).toEqual(['z1']);
    const z2 = new Map([
      [
        'topology.kubernetes.io/zone',
        { key: 'topology.kubernetes.io/zone', complement: false, values: new Set(['z2']) },
      ],
    ]);
    expect(a.reachable(undefined, z2)).toEqual([]);
  });
});

describe('device templates', () => {
  it('derives NVIDIA GPUs from nvidia.com/gpu capacity when the type carries no templates', () => {
    const it8 = { name: 'p4d.24xlarge', capacity: { 'nvidia.com/gpu': 8 } } as unknown as InstanceType;
    const [t] = deviceTemplatesOf(it8);
    expect(t?.driver).toBe(NVIDIA_DRA_DRIVER);
    expect(t?.devices.map((d) => d.name)).toEqual([
      'gpu-0',
      'gpu-1',
      'gpu-2',
      'gpu-3',
      'gpu-4',
      'gpu-5',
      'gpu-6',
      'gpu-7',
    ]);
    expect(t?.devices[3]?.attributes[`${NVIDIA_DRA_DRIVER}/index`]).toEqual({ kind: 'int', value: 3 });
    expect(deviceTemplatesOf({ name: 'm5.large', capacity: { cpu: 2000 } } as unknown as InstanceType)).toEqual([]);
    expect(deviceTemplatesOf({ ...it8, deviceTemplates: [] })).toEqual([]);
  });
});
