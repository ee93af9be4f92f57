// NodeOverlay evaluation, case for case after Karpenter core pkg/controllers/nodeoverlay/suite_test.go (main
// after v1.14.1) where the case is about the store's outcome rather than the controller's plumbing.
import { describe, expect, it } from 'vitest';
import type { NodeOverlay } from '../api/nodeoverlay.ts';
import type { NodeSelectorRequirement } from '../domain/types.ts';
import { fakeInstanceTypes } from '../../test/fixtures/instancetypes.ts';
import { nodePool } from '../../test/fixtures/builders.ts';
import { adjustedPrice, applyOverlays, evaluateOverlays, overlayAnnotations, type PoolTypes } from './overlay.ts';

const IT = 'node.kubernetes.io/instance-type';
const ZONE = 'topology.kubernetes.io/zone';
const CT = 'karpenter.sh/capacity-type';
const inOp = (key: string, ...values: string[]): NodeSelectorRequirement => ({ key, operator: 'In', values });

const overlay = (name: string, o: Partial<NodeOverlay> = {}): NodeOverlay => ({
  name,
  weight: 0,
  requirements: [],
  runtimeProblems: [],
  ...o,
});
const pools = (...names: string[]): PoolTypes[] =>
  (names.length ? names : ['default']).map((n) => ({
    pool: nodePool({ name: n, labels: n === 'labelled' ? { team: 'a' } : {} }),
    instanceTypes: fakeInstanceTypes(3),
  }));

function run(ps: PoolTypes[], ovs: NodeOverlay[]) {
  const e = evaluateOverlays(ps, ovs);
  const status = Object.fromEntries(e.outcomes.map((o) => [o.name, o.status]));
  const types = (pool = 'default') =>
    applyOverlays(e.updates, pool, ps.find((p) => p.pool.name === pool)!.instanceTypes);
  const price = (type: string, pool = 'default') =>
    types(pool)
      .find((t) => t.name === type)!
      .offerings.map((o) => o.price);
  return { e, status, types, price };
}

describe('NodeOverlay', () => {
  it('should return the same instance type when zero overlay are applied', () => {
    const ps = pools();
    const { types } = run(ps, []);
    expect(types()).toEqual(ps[0]!.instanceTypes);
  });
  it('should pass with a single overlay', () => {
    const { status } = run(pools(), [overlay('a', { priceAdjustment: '+10%' })]);
    expect(status).toEqual({ a: 'Applied' });
  });

  describe('Runtime Validation', () => {
    it('should fail validation for invalid requirements values', () => {
      const { e, price } = run(pools(), [
        overlay('bad', { price: '9', runtimeProblems: ['invalid value: x in requirements, restricted'] }),
      ]);
      expect(e.outcomes).toEqual([
        { name: 'bad', status: 'RuntimeValidation', message: 'invalid value: x in requirements, restricted' },
      ]);
      expect(price('fake-it-0')).not.toContain(9);
    });
  });

  describe('Requirements Validations', () => {
    it('should fail when requirements overlays overlap', () => {
      const { status } = run(pools(), [
        overlay('a', { price: '1', requirements: [inOp(IT, 'fake-it-0', 'fake-it-1')] }),
        overlay('b', { price: '2', requirements: [inOp(IT, 'fake-it-1')] }),
      ]);
      // Same weight: "b" goes first (later name), "a" then finds fake-it-1 already set at its weight.
      expect(status).toEqual({ a: 'Conflict', b: 'Applied' });
    });
    it("should succeed with requirements overlays don't overlap", () => {
      const { status } = run(pools(), [
        overlay('a', { price: '1', requirements: [inOp(IT, 'fake-it-0')] }),
        overlay('b', { price: '2', requirements: [inOp(IT, 'fake-it-1')] }),
      ]);
      expect(status).toEqual({ a: 'Applied', b: 'Applied' });
    });
    it('should fail with requirements overlays overlap on zone', () => {
      const { status } = run(pools(), [
        overlay('a', { price: '1', requirements: [inOp(ZONE, 'test-zone-1', 'test-zone-2')] }),
        overlay('b', { price: '2', requirements: [inOp(ZONE, 'test-zone-2')] }),
      ]);
      expect(status['a']).toBe('Conflict');
    });
    it('should fail with requirements overlays overlap on capacity type', () => {
      const { status } = run(pools(), [
        overlay('a', { price: '1', requirements: [inOp(CT, 'spot')] }),
        overlay('b', { price: '2', requirements: [inOp(CT, 'spot', 'on-demand')] }),
      ]);
      expect(status['a']).toBe('Conflict');
    });
    it("should succeed with offering requirements that don't overlap", () => {
      const { status, price } = run(pools(), [
        overlay('a', { price: '1', requirements: [inOp(CT, 'spot')] }),
        overlay('b', { price: '2', requirements: [inOp(CT, 'on-demand')] }),
      ]);
      expect(status).toEqual({ a: 'Applied', b: 'Applied' });
      const it0 = run(pools(), []).types()[0]!;
      expect(price('fake-it-0')).toEqual(it0.offerings.map((o) => (o.capacityType === 'spot' ? 1 : 2)));
    });
  });

  describe('Capacity Adjustment', () => {
    it('should fail with conflicting capacity overlays with overlapping requirements', () => {
      const { status } = run(pools(), [
        overlay('a', { capacity: { 'smarter-devices/fuse': 1 } }),
        overlay('b', { capacity: { 'smarter-devices/fuse': 2 } }),
      ]);
      expect(status).toEqual({ a: 'Conflict', b: 'Applied' });
    });
    it('should pass with conflicting capacity overlays with mutually exclusive weights', () => {
      const { status, types } = run(pools(), [
        overlay('a', { weight: 10, capacity: { 'smarter-devices/fuse': 1 } }),
        overlay('b', { weight: 5, capacity: { 'smarter-devices/fuse': 2 } }),
      ]);
      expect(status).toEqual({ a: 'Applied', b: 'Applied' });
      expect(
        types().every((t) => t.capacity['smarter-devices/fuse'] === 1 && t.allocatable['smarter-devices/fuse'] === 1),
      ).toBe(true);
    });
    it('should pass with non conflicting capacity overlays with overlapping requirements', () => {
      const { status, types } = run(pools(), [
        overlay('a', { capacity: { 'example.com/a': 1 } }),
        overlay('b', { capacity: { 'example.com/b': 2 } }),
      ]);
      expect(status).toEqual({ a: 'Applied', b: 'Applied' });
      expect(types()[0]!.capacity).toMatchObject({ 'example.com/a': 1, 'example.com/b': 2 });
    });
  });

  describe('Capacity', () => {
    it('should only apply override for nodepool that defined in the overlay requirements', () => {
      const ps = pools('default', 'other');
      const { types } = run(ps, [
        overlay('a', { capacity: { 'example.com/a': 4 }, requirements: [inOp('karpenter.sh/nodepool', 'other')] }),
      ]);
      expect(types('other')[0]!.capacity['example.com/a']).toBe(4);
      expect(types('default')[0]!.capacity['example.com/a']).toBeUndefined();
    });
    it('should only apply price adjustments for nodeclaim spec labels that defined in the overlay requirements', () => {
      const ps = pools('default', 'labelled');
      const { price } = run(ps, [overlay('a', { price: '7', requirements: [inOp('team', 'a')] })]);
      expect(price('fake-it-0', 'labelled').every((p) => p === 7)).toBe(true);
      expect(price('fake-it-0', 'default').some((p) => p === 7)).toBe(false);
    });
    it('should not apply capacity adjustments for instances types that do not overlap', () => {
      const { types } = run(pools(), [
        overlay('a', { capacity: { 'example.com/a': 1 }, requirements: [inOp(IT, 'fake-it-2')] }),
      ]);
      expect(types().map((t) => t.capacity['example.com/a'])).toEqual([undefined, undefined, 1]);
    });
    it('should apply higher weight overlay when multiple overlays match the same instance type', () => {
      const { price } = run(pools(), [
        overlay('low', { weight: 1, price: '1' }),
        overlay('high', { weight: 100, price: '3' }),
      ]);
      expect(price('fake-it-1').every((p) => p === 3)).toBe(true);
    });
    it('should that there is not a partial application for nodepools', () => {
      const ps = pools('default', 'other');
      const { status, price } = run(ps, [
        overlay('z-first', { price: '5', requirements: [inOp('karpenter.sh/nodepool', 'other')] }),
        overlay('a-second', { price: '6' }),
      ]);
      expect(status).toEqual({ 'z-first': 'Applied', 'a-second': 'Conflict' });
      // a-second conflicts in pool "other", so it applies in "default" neither.
      expect(price('fake-it-0', 'default').some((p) => p === 6)).toBe(false);
    });
  });

  it('should apply pricing and capacity adjustment from two overlays on the same instance type', () => {
    const { types } = run(pools(), [
      overlay('p', { price: '0.5' }),
      overlay('c', { capacity: { 'example.com/c': 2 } }),
    ]);
    expect(types()[0]!.offerings.every((o) => o.price === 0.5)).toBe(true);
    expect(types()[0]!.capacity['example.com/c']).toBe(2);
  });

  it('marks what it overlaid, and a NodeClaim over those types carries the matching annotations', () => {
    const { types } = run(pools(), [
      overlay('p', { price: '0.5', requirements: [inOp(IT, 'fake-it-0')] }),
      overlay('c', { capacity: { 'example.com/c': 2 }, requirements: [inOp(IT, 'fake-it-1')] }),
    ]);
    const [priced, grown, plain] = types();
    expect(priced!.offerings.every((o) => o.priceOverlaid)).toBe(true);
    expect(priced!.capacityOverlaid).toBeUndefined();
    expect(grown!.capacityOverlaid).toBe(true);
    expect(grown!.offerings.some((o) => o.priceOverlaid)).toBe(false);
    expect(overlayAnnotations([plain!])).toBeUndefined();
    expect(overlayAnnotations([plain!, priced!])).toEqual({ 'karpenter.sh/price-overlay-applied': 'true' });
    expect(overlayAnnotations([grown!])).toEqual({ 'karpenter.sh/capacity-overlay-applied': 'true' });
    expect(overlayAnnotations([priced!, grown!])).toEqual({
      'karpenter.sh/price-overlay-applied': 'true',
      'karpenter.sh/capacity-overlay-applied': 'true',
    });
  });

  it('adjusts prices as Karpenter: absolute, signed amount, percentage, never below zero', () => {
    expect(adjustedPrice(1, '0.25')).toBe(0.25);
    expect(adjustedPrice(1, '+0.5')).toBe(1.5);
    expect(adjustedPrice(1, '-2')).toBe(0);
    expect(adjustedPrice(2, '+10%')).toBeCloseTo(2.2);
    expect(adjustedPrice(2, '-100%')).toBe(0);
  });
});
