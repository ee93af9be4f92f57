import { describe, expect, it } from 'vitest';
import type { NodePool } from '../domain/types.ts';
import { nodePool, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { fakeInstanceType, fakeOffering } from '../../test/fixtures/instancetypes.ts';
import { driftReason } from './driftcheck.ts';
import { NODEPOOL_HASH_VERSION, nodePoolHash } from './hash.ts';
import { expired, expiresAt } from './expiration.ts';

const hour = 3600_000;
const it0 = fakeInstanceType({
  name: 'm',
  offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price: 1, available: false })],
});

function hashed(p: NodePool): NodePool {
  return { ...p, hash: nodePoolHash(p), hashVersion: NODEPOOL_HASH_VERSION };
}

const node = (o: Parameters<typeof stateNode>[0] = {}) =>
  stateNode({ name: 'n', instanceType: it0, zone: 'test-zone-1', capacityType: 'on-demand', ...o });
const stamped = (p: NodePool, o: Parameters<typeof stateNode>[0] = {}) =>
  node({
    annotations: { 'karpenter.sh/nodepool-hash': p.hash!, 'karpenter.sh/nodepool-hash-version': p.hashVersion! },
    ...o,
  });

describe('drift detection', () => {
  it('is not drifted when nothing changed', () => {
    const p = hashed(nodePool());
    expect(
      driftReason(snapshot({ nodePools: [p], nodes: [stamped(p)], instanceTypes: [it0] }), stamped(p)),
    ).toBeUndefined();
  });

  it('NodePoolDrifted when the template hash changed (same version)', () => {
    const before = hashed(nodePool());
    const after = hashed(nodePool({ labels: { team: 'b' } }));
    const n = stamped(before);
    expect(driftReason(snapshot({ nodePools: [after], instanceTypes: [it0] }), n)).toBe('NodePoolDrifted');
    // a different hash version is never drift (the hash controller re-stamps first)
    const old = node({
      annotations: { 'karpenter.sh/nodepool-hash': 'x', 'karpenter.sh/nodepool-hash-version': 'v2' },
    });
    expect(driftReason(snapshot({ nodePools: [after], instanceTypes: [it0] }), old)).toBeUndefined();
  });

  it('RequirementsDrifted when the labels leave the requirements, not when a satisfied one is added', () => {
    const zoneA = hashed(
      nodePool({ requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['test-zone-2'] }] }),
    );
    expect(driftReason(snapshot({ nodePools: [zoneA], instanceTypes: [it0] }), stamped(zoneA))).toBe(
      'RequirementsDrifted',
    );
    const ok = hashed(
      nodePool({
        requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['test-zone-1', 'test-zone-2'] }],
      }),
    );
    expect(driftReason(snapshot({ nodePools: [ok], instanceTypes: [it0] }), stamped(ok))).toBeUndefined();
  });

  it('InstanceTypeNotFound only for nodes older than an hour, ignoring availability', () => {
    const p = hashed(nodePool());
    const young = stamped(p, { createdAt: 0 });
    const gone = snapshot({ now: 30 * 60_000, nodePools: [p], instanceTypes: [] });
    expect(driftReason(gone, young)).toBeUndefined();
    expect(driftReason({ ...gone, now: 2 * hour }, young)).toBe('InstanceTypeNotFound');
    // the type still exists with an unavailable offering: not drifted
    expect(driftReason(snapshot({ now: 2 * hour, nodePools: [p], instanceTypes: [it0] }), young)).toBeUndefined();
    const otherZone = stamped(p, { zone: 'test-zone-3' });
    // no offering of the type in the node's zone at all
    expect(driftReason(snapshot({ now: 2 * hour, nodePools: [p], instanceTypes: [it0] }), otherZone)).toBe(
      'InstanceTypeNotFound',
    );
  });

  it('passes the node class drift through last', () => {
    const p = hashed(nodePool());
    expect(
      driftReason(snapshot({ nodePools: [p], instanceTypes: [it0] }), { ...stamped(p), nodeClassDrift: 'AMIDrift' }),
    ).toBe('AMIDrift');
  });
});

describe('expiration', () => {
  it('expires at creation + expireAfter, never for Never, regardless of budgets or do-not-disrupt', () => {
    const p = nodePool({ expireAfter: 10 * hour, budgets: [{ nodes: '0' }] });
    const n = stateNode({ name: 'old', createdAt: 0, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    const s = snapshot({ now: 10 * hour, nodePools: [p], nodes: [n, stateNode({ name: 'new', createdAt: hour })] });
    expect(expiresAt(s, n)).toBe(10 * hour);
    expect(expired(s)).toEqual(['old']);
    expect(expired({ ...s, now: 10 * hour - 1 })).toEqual([]);
    expect(expired(snapshot({ now: 100 * hour, nodePools: [nodePool({ expireAfter: null })], nodes: [n] }))).toEqual(
      [],
    );
    // the NodeClaim's own expireAfter wins over the pool's
    expect(expired({ ...s, nodes: [{ ...n, expireAfter: 20 * hour }] })).toEqual([]);
    expect(expired({ ...s, nodes: [{ ...n, deleting: true }] })).toEqual([]);
  });
});
