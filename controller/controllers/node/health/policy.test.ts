import { describe, expect, it } from 'vitest';
import { AWS_REPAIR_POLICIES } from '../../../cloudprovider/aws/repair.ts';
import { allowedUnhealthy, matchesAnyPolicy, snakeCase, unhealthyCondition } from './policy.ts';

describe('node repair policy', () => {
  it("names conditions in Karpenter's snake case", () => {
    expect(['Ready', 'AcceleratedHardwareReady', 'KernelReady', 'BadNode', 'NetworkingReady'].map(snakeCase)).toEqual([
      'ready',
      'accelerated_hardware_ready',
      'kernel_ready',
      'bad_node',
      'networking_ready',
    ]);
  });

  it('allows 20 % of the nodes to be unhealthy, rounded up', () => {
    expect([0, 1, 3, 5, 10, 11].map(allowedUnhealthy)).toEqual([0, 1, 1, 1, 2, 3]);
  });

  it("takes the AWS provider's policies: Ready False or Unknown for 30 minutes, accelerated hardware for 10", () => {
    const ready = unhealthyCondition(AWS_REPAIR_POLICIES, [
      { type: 'Ready', status: 'Unknown', lastTransitionTime: 1_000 },
    ]);
    expect(ready?.repairAt).toBe(1_000 + 30 * 60_000);
    const gpu = unhealthyCondition(AWS_REPAIR_POLICIES, [
      { type: 'Ready', status: 'False', lastTransitionTime: 0 },
      { type: 'AcceleratedHardwareReady', status: 'False', lastTransitionTime: 0 },
    ]);
    expect(gpu?.condition.type).toBe('AcceleratedHardwareReady');
    expect(gpu?.repairAt).toBe(10 * 60_000);
    expect(
      unhealthyCondition(AWS_REPAIR_POLICIES, [
        { type: 'Ready', status: 'True' },
        { type: 'StorageReady', status: 'True' },
      ]),
    ).toBeUndefined();
    expect(matchesAnyPolicy(AWS_REPAIR_POLICIES, [{ type: 'KernelReady', status: 'False' }])).toBe(true);
    expect(matchesAnyPolicy(AWS_REPAIR_POLICIES, [{ type: 'KernelReady', status: 'Unknown' }])).toBe(false);
  });
});
