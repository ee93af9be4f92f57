import { describe, expect, it } from 'vitest';
import type { Change } from '../../state/changes.ts';
import { triggers } from './reconcile.ts';

const claim = {
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaim',
  metadata: { name: 'web-0-gpu', namespace: 'default' },
  spec: {},
};
const allocated = { ...claim, status: { allocation: { devices: { results: [] } } } };
const change = (
  kind: Change['kind'],
  obj: Change['obj'],
  old?: Change['obj'],
  type: Change['type'] = 'upsert',
): Change => ({ kind, type, name: obj.metadata.name!, namespace: 'default', obj, ...(old ? { old } : {}) });

describe('what opens a provisioning batch (DRA objects)', () => {
  it('a ResourceClaim created after its pod opens one; its status writes and deletion do not', () => {
    expect(triggers(change('ResourceClaim', claim))).toBe(true);
    expect(triggers(change('ResourceClaim', allocated, claim))).toBe(false);
    expect(triggers(change('ResourceClaim', claim, undefined, 'delete'))).toBe(false);
  });

  it('published devices and changed device classes open one; claim templates do not', () => {
    const slice = {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: { name: 'node-a-gpu' },
      spec: {},
    };
    expect(triggers(change('ResourceSlice', slice))).toBe(true);
    expect(
      triggers(change('DeviceClass', { ...slice, kind: 'DeviceClass', metadata: { name: 'gpu.nvidia.com' } })),
    ).toBe(true);
    expect(triggers(change('ResourceClaimTemplate', { ...claim, kind: 'ResourceClaimTemplate' }))).toBe(false);
  });
});
