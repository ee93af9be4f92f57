// The node-class side of sizing: EC2NodeClass fields (as the engine parses them) and operator settings reach
// the engine's formulas. Vectors from docs/karpenter/aws-provider.md §1 (Karpenter's docs values for AL2023).
import { describe, expect, it } from 'vitest';
import type { EC2NodeClass, Ec2InstanceInfo } from '../../../../engine/index.ts';
import { fixtureInstanceTypes, nodeClass } from '../../../../test/fakes/aws.ts';
import { factsFromInstanceTypeInfo } from './facts.ts';
import { nodeClassSizing, sizeInstance } from './sizing.ts';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const defaults = { vmMemoryOverheadPercent: 0.075, reservedENIs: 0 };

function fixture(name: string): Ec2InstanceInfo {
  const f = factsFromInstanceTypeInfo(fixtureInstanceTypes().find((t) => t.InstanceType === name)!);
  if ('skip' in f) throw new Error(f.skip);
  return f;
}
const size = (name: string | Ec2InstanceInfo, spec: Record<string, unknown> = {}, settings = defaults) =>
  sizeInstance(typeof name === 'string' ? fixture(name) : name, nodeClassSizing(nodeClass(spec), settings));
const pods = (name: string, spec: Record<string, unknown> = {}, settings = defaults) =>
  size(name, spec, settings).capacity.pods;

describe('sizing under a node class', () => {
  it('reproduces the m5.large worked example: 1930m cpu, 6903Mi memory, 17Gi ephemeral, 29 pods', () => {
    const r = size('m5.large');
    expect(r.capacity).toMatchObject({ cpu: 2000, memory: 7577 * MiB, pods: 29, 'ephemeral-storage': 20 * GiB });
    expect(r.allocatable).toMatchObject({ cpu: 1930, memory: 6903 * MiB, pods: 29, 'ephemeral-storage': 17 * GiB });
  });

  it('subtracts the Graviton CMA reservation before the VM overhead (t4g.micro: 888Mi)', () => {
    expect(
      size({ name: 't4g.micro', vcpu: 2, memoryMiB: 1024, arch: 'arm64', maxENIs: 2, ipv4PerENI: 2 }).capacity.memory,
    ).toBe(888 * MiB);
  });

  it('takes RESERVED_ENIS off the pods and gives 0 pods when none are left', () => {
    expect(pods('m5.large', {}, { ...defaults, reservedENIs: 1 })).toBe(2 * 9 + 2);
    expect(pods('m5.large', {}, { ...defaults, reservedENIs: 3 })).toBe(0);
  });

  it('applies kubelet maxPods, then podsPerCore; Bottlerocket ignores podsPerCore; Windows uses 110', () => {
    expect(pods('m5.large', { kubelet: { maxPods: 50 } })).toBe(50);
    expect(pods('m5.large', { kubelet: { podsPerCore: 4 } })).toBe(8);
    expect(
      pods('m5.large', { amiSelectorTerms: [{ alias: 'bottlerocket@latest' }], kubelet: { podsPerCore: 4 } }),
    ).toBe(29);
    expect(pods('m5.large', { amiSelectorTerms: [{ alias: 'windows2022@latest' }] })).toBe(110);
  });

  it('keeps kube-reserved memory on ENI-limited pods when maxPods is overridden (AL2023)', () => {
    const r = size('m5.large', { kubelet: { maxPods: 110 } });
    expect(r.capacity.pods).toBe(110);
    expect(r.allocatable.memory).toBe(6903 * MiB); // 11 x 29 + 255, not 11 x 110 + 255
  });

  it('sizes ephemeral storage from the root volume, the family device, RAID0 instance storage, or the default', () => {
    expect(
      size('m5.large', { blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '100Gi' } }] }).capacity[
        'ephemeral-storage'
      ],
    ).toBe(100 * GiB);
    expect(
      size('m5.large', {
        blockDeviceMappings: [{ deviceName: '/dev/xvdz', rootVolume: true, ebs: { volumeSize: '50Gi' } }],
      }).capacity['ephemeral-storage'],
    ).toBe(50 * GiB);
    expect(size('g4ad.16xlarge', { instanceStorePolicy: 'RAID0' }).capacity['ephemeral-storage']).toBe(2400e9);
    expect(
      size('m5.large', { amiSelectorTerms: [{ alias: 'windows2019@latest' }] }).capacity['ephemeral-storage'],
    ).toBe(50 * GiB);
  });

  it('honours evictionHard as a quantity or a percentage, and system-reserved', () => {
    const r = size('m5.large', {
      kubelet: {
        evictionHard: { 'memory.available': '500Mi', 'nodefs.available': '5%' },
        systemReserved: { cpu: '100m', pid: '100' },
      },
    });
    expect(r.overhead.memory).toBe((574 + 500) * MiB);
    expect(r.overhead['ephemeral-storage']).toBe(GiB + Math.ceil(20 * GiB * 0.05));
    expect(r.overhead.cpu).toBe(170);
  });

  it('counts EFA-only interfaces on card 0 against pods, and reports the declared EFA count', () => {
    const networkInterfaces = [
      { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
      { networkCardIndex: 0, deviceIndex: 1, interfaceType: 'efa-only' },
      { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' },
    ];
    const plain = size('p5.48xlarge');
    const r = size('p5.48xlarge', { networkInterfaces });
    expect(plain.capacity).toMatchObject({ pods: 100, 'vpc.amazonaws.com/efa': 32 });
    // The default card has 2 ENIs; one is EFA-only: 1 x (50 - 1) + 2.
    expect(r.capacity).toMatchObject({ pods: 51, 'vpc.amazonaws.com/efa': 2 });
    // Kube-reserved memory still uses the ENI-limited count with nothing reserved (100 pods).
    expect(r.kubeReserved.memory).toBe(plain.kubeReserved.memory);
  });

  it('refuses bad kubelet values at parse time, and names the node class and field if one gets past the parser', () => {
    expect(() => nodeClass({ kubelet: { kubeReserved: { memory: 'lots' } } })).toThrow(
      /EC2NodeClass\/default: spec\.kubelet\.kubeReserved\[memory\]/,
    );
    const nc = nodeClass();
    const unparsed: EC2NodeClass = { ...nc, spec: { ...nc.spec, kubelet: { kubeReserved: { memory: 'lots' } } } };
    expect(() => sizeInstance(fixture('m5.large'), nodeClassSizing(unparsed, defaults))).toThrow(
      /EC2NodeClass default: spec\.kubelet\.kubeReserved\.memory/,
    );
  });
});
