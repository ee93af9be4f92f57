// The launch-time filters as the planner uses them: what the engine decides here is what the controller's launch
// (controller/cloudprovider/aws/launch, whose own tests cover the launch path) gives CreateFleet.
import { describe, expect, it } from 'vitest';
import type { InstanceType, Offering } from '../domain/types.ts';
import { fromOperator, req, requirements } from '../scheduling/requirements.ts';
import { isExotic, selectCandidates } from './filter.ts';

const offer = (capacityType: 'spot' | 'on-demand', zone: string, price: number): Offering => ({
  capacityType,
  zone,
  price,
  available: true,
});

function type(name: string, offerings: Offering[], opts: { size?: string; gpu?: number } = {}): InstanceType {
  return {
    name,
    requirements: requirements(
      req('node.kubernetes.io/instance-type', false, [name]),
      req('karpenter.k8s.aws/instance-size', false, [opts.size ?? 'large']),
    ),
    capacity: { cpu: 2000, ...(opts.gpu ? { 'nvidia.com/gpu': opts.gpu } : {}) },
    overhead: {},
    allocatable: { cpu: 2000, ...(opts.gpu ? { 'nvidia.com/gpu': opts.gpu } : {}) },
    offerings,
  };
}
const both = requirements(fromOperator('karpenter.sh/capacity-type', 'In', ['spot', 'on-demand']));

describe('launch filters', () => {
  it('calls metal sizes and accelerator types exotic', () => {
    expect(isExotic(type('m6g.metal', [], { size: 'metal' }))).toBe(true);
    expect(isExotic(type('g5.xlarge', [], { gpu: 1 }))).toBe(true);
    expect(isExotic(type('m6g.large', []))).toBe(false);
  });

  it('launches on-demand when every spot offering is dearer than the cheapest on-demand one (AWS provider order)', () => {
    const sel = selectCandidates(
      [
        type('m5.large', [offer('on-demand', 'a', 1), offer('spot', 'a', 1.3)]),
        type('r5.large', [offer('spot', 'a', 1.2)]),
      ],
      both,
      {},
    );
    expect(sel.ok && sel.capacityType).toBe('on-demand');
    expect(sel.ok && sel.candidates.map((c) => c.type.name)).toEqual(['m5.large']);
  });

  it('drops a spot type dearer than the cheapest on-demand offering, keeping the cheaper spot ones', () => {
    const sel = selectCandidates(
      [
        type('m5.large', [offer('on-demand', 'a', 1), offer('spot', 'a', 0.4)]),
        type('r5.large', [offer('on-demand', 'a', 1.6), offer('spot', 'a', 1.2)]),
        type('c5.large', [offer('on-demand', 'a', 0.9)]),
      ],
      both,
      {},
    );
    expect(sel.ok && sel.capacityType).toBe('spot');
    expect(sel.ok && sel.candidates.map((c) => c.type.name)).toEqual(['m5.large']);
  });

  it('keeps exotic types when nothing generic fits', () => {
    const sel = selectCandidates(
      [type('g5.xlarge', [offer('on-demand', 'a', 1)], { gpu: 1 }), type('m5.large', [offer('on-demand', 'a', 0.1)])],
      both,
      { 'nvidia.com/gpu': 1 },
    );
    expect(sel.ok && sel.candidates.map((c) => c.type.name)).toEqual(['g5.xlarge']);
  });
});
