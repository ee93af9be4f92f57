import { describe, expect, it } from 'vitest';
import { EC2NODECLASS_HASH_VERSION, nodeClassHash } from './hash.ts';
import type { EC2NodeClassSpec } from './nodeclass-types.ts';

const base: EC2NodeClassSpec = {
  amiSelectorTerms: [{ alias: 'al2023@latest' }],
  subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c' } }],
  securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c' } }],
  role: 'KarpenterNodeRole-c',
  tags: { Team: 'platform', Env: 'prod' },
  blockDeviceMappings: [
    { deviceName: '/dev/xvda', ebs: { volumeSize: '100Gi', volumeType: 'gp3' } },
    { deviceName: '/dev/xvdb', ebs: { volumeSize: '20Gi' } },
  ],
};
const h = (spec: EC2NodeClassSpec, family: 'AL2023' | 'Bottlerocket' = 'AL2023') => nodeClassHash({ spec, amiFamily: family });

describe('nodeClassHash', () => {
  it('is a stable decimal string with its own version', () => {
    expect(h(base)).toMatch(/^\d+$/);
    expect(h(base)).toBe(h(structuredClone(base)));
    expect(EC2NODECLASS_HASH_VERSION).not.toBe('v5');
  });

  it('treats lists as sets and ignores key order', () => {
    const reordered = { ...base, tags: { Env: 'prod', Team: 'platform' }, blockDeviceMappings: [...base.blockDeviceMappings!].reverse() };
    expect(h(reordered)).toBe(h(base));
  });

  it('ignores zero values', () => {
    expect(h({ ...base, userData: '', detailedMonitoring: false, tags: { ...base.tags } })).toBe(h(base));
  });

  it('ignores the selector terms and amiFamily but hashes the resolved family', () => {
    expect(h({ ...base, subnetSelectorTerms: [{ id: 'subnet-1' }], amiSelectorTerms: [{ alias: 'al2023@v20240625' }], amiFamily: 'AL2023' })).toBe(h(base));
    expect(h(base, 'Bottlerocket')).not.toBe(h(base));
  });

  it('changes with anything launched instances carry', () => {
    expect(h({ ...base, tags: { ...base.tags, Team: 'data' } })).not.toBe(h(base));
    expect(h({ ...base, userData: '#!/bin/bash\necho hi' })).not.toBe(h(base));
    expect(h({ ...base, metadataOptions: { httpPutResponseHopLimit: 2 } })).not.toBe(h(base));
    expect(h({ ...base, kubelet: { maxPods: 50 } })).not.toBe(h(base));
    expect(nodeClassHash({ spec: base, amiFamily: 'AL2023', caBundle: 'abc' })).not.toBe(h(base));
  });
});
