import { describe, expect, it } from 'vitest';
import { newLogger } from '../operator/logger.ts';
import { DraObjects } from './dra.ts';

describe('DraObjects', () => {
  it('parses the DRA objects into the snapshot state and leaves out (and logs) ones that do not parse', () => {
    const errors: unknown[] = [];
    const log = newLogger({ level: 'silent' });
    log.error = ((o: unknown) => {
      errors.push(o);
    }) as typeof log.error;
    const d = new DraObjects(log);
    d.apply('DeviceClass', {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceClass',
      metadata: { name: 'gpu' },
      spec: { selectors: [{ cel: { expression: 'device.driver == "gpu.nvidia.com"' } }] },
    });
    d.apply('ResourceSlice', {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: { name: 's' },
      spec: {
        driver: 'gpu.nvidia.com',
        nodeName: 'n1',
        pool: { name: 'n1', generation: 1, resourceSliceCount: 1 },
        devices: [{ name: 'gpu-0' }],
      },
    });
    d.apply('ResourceSlice', {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: { name: 'broken' },
      spec: { driver: 'x', pool: { name: 'p' }, devices: [] },
    });
    d.apply('ResourceClaim', {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      metadata: { name: 'c', namespace: 'ml' },
      spec: { devices: { requests: [{ name: 'r', exactly: { deviceClassName: 'gpu' } }] } },
    });
    const s = d.state();
    expect(s.deviceClasses.map((c) => c.name)).toEqual(['gpu']);
    expect(s.resourceSlices.map((x) => x.name)).toEqual(['s']);
    expect(s.resourceClaims.map((c) => `${c.namespace}/${c.name}`)).toEqual(['ml/c']);
    expect(JSON.stringify(errors)).toContain('must set exactly one of nodeName, nodeSelector, allNodes');
    d.remove('ResourceSlice', { metadata: { name: 's' } });
    expect(d.state().resourceSlices).toEqual([]);
  });
});
