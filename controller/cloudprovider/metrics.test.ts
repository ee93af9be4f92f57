import { describe, expect, it } from 'vitest';
import { Metrics } from '../operator/metrics.ts';
import { withMetrics } from './metrics.ts';
import { NodeClaimNotFoundError, type CloudProvider } from './types.ts';

describe('withMetrics', () => {
  it('times every call and counts failures by error type, labelled with the calling controller', async () => {
    const metrics = new Metrics();
    const inner = {
      name: 'fake',
      get: async () => {
        throw new NodeClaimNotFoundError('gone');
      },
      list: async () => [],
    } as unknown as CloudProvider;
    const cp = withMetrics(inner, metrics, 'nodeclaim.termination');
    expect(await cp.list()).toEqual([]);
    await expect(cp.get('aws:///a/i-1')).rejects.toBeInstanceOf(NodeClaimNotFoundError);
    expect(
      await metrics.value('karpenter_cloudprovider_duration_seconds', {
        method: 'List',
        provider: 'fake',
        controller: 'nodeclaim.termination',
      }),
    ).toBe(1);
    expect(
      await metrics.value('karpenter_cloudprovider_errors_total', { method: 'Get', error: 'NodeClaimNotFoundError' }),
    ).toBe(1);
    expect(await metrics.value('karpenter_cloudprovider_errors_total', { method: 'List' })).toBeUndefined();
    expect(await metrics.text()).toContain(
      'karpenter_cloudprovider_duration_seconds_bucket{le="0.005",controller="nodeclaim.termination",method="List",provider="fake"}',
    );
  });
});
