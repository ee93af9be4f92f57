import { describe, expect, it } from 'vitest';
import { formatFieldError } from './errors.ts';
import { parseDeviceClass, parseResourceClaim, parseResourceClaimTemplate, parseResourceSlice } from './dra.ts';
import { parsePod } from './pod.ts';

const errs = (r: { ok: boolean; errors?: readonly Parameters<typeof formatFieldError>[0][] }) =>
  r.ok ? [] : r.errors!.map(formatFieldError);

describe('DRA objects at the boundary', () => {
  it('parses a ResourceSlice with qualified attributes, capacity and shared counters', () => {
    const r = parseResourceSlice({
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: { name: 'node-1-gpu' },
      spec: {
        driver: 'gpu.nvidia.com',
        nodeName: 'node-1',
        pool: { name: 'node-1', generation: 2, resourceSliceCount: 1 },
        sharedCounters: [{ name: 'gpu-0-counters', counters: { memory: { value: '40Gi' } } }],
        devices: [
          {
            name: 'gpu-0',
            attributes: { index: { int: 0 }, 'example.com/kind': { string: 'big' } },
            capacity: { memory: { value: '40Gi' } },
            consumesCounters: [{ counterSet: 'gpu-0-counters', counters: { memory: { value: '20Gi' } } }],
          },
        ],
      },
    });
    expect(errs(r)).toEqual([]);
    const s = r.ok ? r.value : undefined;
    expect(s?.nodeName).toBe('node-1');
    expect(s?.pool).toEqual({ name: 'node-1', generation: 2, resourceSliceCount: 1 });
    expect(s?.devices[0]?.attributes).toEqual({
      'gpu.nvidia.com/index': { kind: 'int', value: 0 },
      'example.com/kind': { kind: 'string', value: 'big' },
    });
    expect(s?.devices[0]?.capacity).toEqual({ 'gpu.nvidia.com/memory': 40 * 2 ** 30 });
    expect(s?.devices[0]?.consumesCounters).toEqual([
      { counterSet: 'gpu-0-counters', counters: { memory: 20 * 2 ** 30 } },
    ]);
    expect(s?.sharedCounters).toEqual([{ name: 'gpu-0-counters', counters: { memory: 40 * 2 ** 30 } }]);
  });

  it('names the object and the field of every problem', () => {
    const r = parseResourceSlice({
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: { name: 'bad' },
      spec: {
        driver: 'd',
        nodeName: 'n',
        allNodes: true,
        pool: { name: 'p' },
        devices: [{ name: 'x', attributes: { a: { int: 1, string: 's' } }, capacity: { m: { value: 'lots' } } }],
      },
    });
    expect(errs(r)).toEqual([
      'ResourceSlice/bad: spec: must set exactly one of nodeName, nodeSelector, allNodes (has 2)',
      'ResourceSlice/bad: spec.devices[0].attributes[a]: must set exactly one of string, int, bool, version (has string, int)',
      'ResourceSlice/bad: spec.devices[0].capacity[m].value: "lots" is not a valid quantity (expected a number with an optional suffix such as 500m, 2Gi, 1.5, 1e3)',
    ]);
    expect(
      errs(parseDeviceClass({ apiVersion: 'resource.k8s.io/v1beta1', kind: 'DeviceClass', metadata: { name: 'old' } })),
    ).toEqual(['DeviceClass/old: apiVersion: "resource.k8s.io/v1beta1" is not supported; use resource.k8s.io/v1']);
    expect(
      errs(
        parseResourceClaim({
          kind: 'ResourceClaim',
          metadata: { name: 'c', namespace: 'ml' },
          spec: { devices: { requests: [{ name: 'r', exactly: { count: 0 } }] } },
        }),
      ),
    ).toEqual([
      'ResourceClaim/ml/c: spec.devices.requests[0].exactly.deviceClassName: is required but missing',
      'ResourceClaim/ml/c: spec.devices.requests[0].exactly.count: must be at least 1, not 0',
    ]);
    expect(errs(parseResourceSlice('nope'))).toEqual(['ResourceSlice/<unnamed>: is not an object']);
  });

  it('parses claims with their allocation and consumers, and records unsupported features with the reason', () => {
    const r = parseResourceClaim({
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      metadata: { name: 'c', namespace: 'ml' },
      spec: {
        devices: {
          requests: [
            {
              name: 'gpu',
              exactly: {
                deviceClassName: 'gpu',
                count: 2,
                capacity: { requests: { memory: '10Gi' } },
                selectors: [{ cel: { expression: 'device.driver == "d"' } }],
              },
            },
          ],
        },
      },
      status: {
        allocation: {
          devices: {
            results: [{ request: 'gpu', driver: 'd', pool: 'p', device: 'x', consumedCapacity: { memory: '10Gi' } }],
          },
        },
        reservedFor: [{ resource: 'pods', name: 'p', uid: 'u1' }],
      },
    });
    expect(errs(r)).toEqual([]);
    const c = r.ok ? r.value : undefined;
    expect(c?.requests[0]).toMatchObject({
      name: 'gpu',
      deviceClassName: 'gpu',
      allocationMode: 'ExactCount',
      count: 2,
      capacity: { memory: 10 * 2 ** 30 },
    });
    expect(c?.requests[0]?.selectors[0]?.predicates).toEqual([{ kind: 'driver', op: '==', value: 'd' }]);
    expect(c?.allocation?.devices).toEqual([
      { request: 'gpu', driver: 'd', pool: 'p', device: 'x', consumedCapacity: { 'd/memory': 10 * 2 ** 30 } },
    ]);
    expect(c?.reservedFor).toEqual(['u1']);
    const t = parseResourceClaimTemplate({
      kind: 'ResourceClaimTemplate',
      metadata: { name: 't' },
      spec: {
        spec: {
          devices: {
            requests: [{ name: 'a', firstAvailable: [{ name: 'x', deviceClassName: 'gpu' }] }],
            constraints: [{ matchAttribute: 'gpu.nvidia.com/numa' }],
          },
        },
      },
    });
    expect(t.ok && t.value.unsupported).toMatch(/constraints/);
    expect(t.ok && t.value.requests[0]?.unsupported).toMatch(/firstAvailable/);
  });

  it('reads pod resource claims, generated claim names and container / init-container claims', () => {
    const r = parsePod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ml' },
      spec: {
        initContainers: [{ name: 'i', resources: { claims: [{ name: 'scratch' }] } }],
        containers: [{ name: 'c', resources: { claims: [{ name: 'gpu' }] } }],
        resourceClaims: [
          { name: 'gpu', resourceClaimTemplateName: 'one-gpu' },
          { name: 'scratch', resourceClaimName: 'shared' },
          { name: 'bad', resourceClaimName: 'x', resourceClaimTemplateName: 'y' },
        ],
      },
      status: { resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'p-gpu-abcde' }] },
    });
    expect(errs(r)).toEqual([
      'Pod/ml/p: spec.resourceClaims[2]: must set exactly one of resourceClaimName and resourceClaimTemplateName',
    ]);
    const ok = parsePod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ml' },
      spec: {
        containers: [{ name: 'c', resources: { claims: [{ name: 'gpu' }] } }],
        resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }],
      },
      status: { resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'p-gpu-abcde' }] },
    });
    expect(ok.ok && ok.value.resourceClaims).toEqual([
      { name: 'gpu', resourceClaimTemplateName: 'one-gpu', generatedClaimName: 'p-gpu-abcde' },
    ]);
    expect(ok.ok && ok.value.containerClaims).toEqual(['gpu']);
  });
});
