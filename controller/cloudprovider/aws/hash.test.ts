import { describe, expect, it } from 'vitest';
import { nodeClass } from '../../../test/fakes/aws.ts';
import { currentHash, EC2NODECLASS_HASH_VERSION, nodeClassHash } from './hash.ts';

// Specs as the engine's parser gives them (CRD defaults applied), from the fields a user writes.
const raw = {
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
const spec = (over: Record<string, unknown> = {}) => nodeClass({ ...raw, ...over }).spec;
const base = spec();
const h = (s = base, family: 'AL2023' | 'Bottlerocket' = 'AL2023') => nodeClassHash({ spec: s, amiFamily: family });

describe('nodeClassHash', () => {
  it('is a stable decimal string with its own version', () => {
    expect(h(base)).toMatch(/^\d+$/);
    expect(h(base)).toBe(h(structuredClone(base)));
    expect(EC2NODECLASS_HASH_VERSION).not.toBe('v5');
  });

  it('treats lists as sets and ignores key order', () => {
    expect(
      h(spec({ tags: { Env: 'prod', Team: 'platform' }, blockDeviceMappings: [...raw.blockDeviceMappings].reverse() })),
    ).toBe(h(base));
  });

  it('ignores zero values', () => {
    expect(h(spec({ userData: '', detailedMonitoring: false }))).toBe(h(base));
  });

  it('hashes the defaulted spec: writing the CRD defaults changes nothing', () => {
    const defaults = {
      httpEndpoint: 'enabled',
      httpProtocolIPv6: 'disabled',
      httpPutResponseHopLimit: 1,
      httpTokens: 'required',
    };
    expect(h(spec({ metadataOptions: defaults }))).toBe(h(base));
  });

  it('ignores the selector terms and amiFamily but hashes the resolved family', () => {
    expect(
      h(
        spec({
          subnetSelectorTerms: [{ id: 'subnet-1' }],
          amiSelectorTerms: [{ alias: 'al2023@v20240625' }],
          amiFamily: 'AL2023',
        }),
      ),
    ).toBe(h(base));
    expect(h(base, 'Bottlerocket')).not.toBe(h(base));
  });

  it('changes with anything launched instances carry', () => {
    expect(h(spec({ tags: { ...raw.tags, Team: 'data' } }))).not.toBe(h(base));
    expect(h(spec({ userData: '#!/bin/bash\necho hi' }))).not.toBe(h(base));
    expect(h(spec({ metadataOptions: { httpPutResponseHopLimit: 2 } }))).not.toBe(h(base));
    expect(h(spec({ kubelet: { maxPods: 50 } }))).not.toBe(h(base));
    expect(nodeClassHash({ spec: base, amiFamily: 'AL2023', caBundle: 'abc' })).not.toBe(h(base));
  });
});

describe('currentHash', () => {
  it('prefers the annotations the controller wrote, else computes with the parsed family', () => {
    const nc = nodeClass({ ...raw, amiSelectorTerms: [{ alias: 'bottlerocket@latest' }] });
    expect(currentHash(nc)).toEqual({
      hash: nodeClassHash({ spec: nc.spec, amiFamily: 'Bottlerocket' }),
      version: EC2NODECLASS_HASH_VERSION,
    });
    const annotated = nodeClass(raw, {
      metadata: {
        annotations: {
          'karpenter.k8s.aws/ec2nodeclass-hash': '42',
          'karpenter.k8s.aws/ec2nodeclass-hash-version': 'v5',
        },
      },
    });
    expect(currentHash(annotated, 'ca')).toEqual({ hash: '42', version: 'v5' });
  });
});
