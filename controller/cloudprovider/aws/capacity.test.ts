// Vectors from spec/aws-provider.md §1 (Karpenter's docs values for AL2023, no overrides).
import { describe, expect, it } from 'vitest';
import { eniLimitedPods, instanceResources, kubeReservedCpu, memoryCapacity, podCapacity, type CapacitySettings, type InstanceFacts } from './capacity.ts';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const al2023: CapacitySettings = { vmMemoryOverheadPercent: 0.075, reservedENIs: 0, amiFamily: 'AL2023' };
const m5large: InstanceFacts = { name: 'm5.large', vcpu: 2, memoryMiB: 8192, arch: 'x86_64', maxENIs: 3, ipv4PerENI: 10 };

describe('capacity formulas', () => {
  it('reproduces the m5.large worked example: 1930m cpu, 6903Mi memory, 17Gi ephemeral, 29 pods', () => {
    const r = instanceResources(m5large, al2023);
    expect(r.capacity).toMatchObject({ cpu: 2000, memory: 7577 * MiB, pods: 29, 'ephemeral-storage': 20 * GiB });
    expect(r.allocatable).toMatchObject({ cpu: 1930, memory: 6903 * MiB, pods: 29, 'ephemeral-storage': 17 * GiB });
  });

  it('subtracts the Graviton CMA reservation before the VM overhead (t4g.micro: 888Mi)', () => {
    expect(memoryCapacity({ name: 't4g.micro', vcpu: 2, memoryMiB: 1024, arch: 'arm64' }, 0.075)).toBe(888 * MiB);
  });

  it('counts ENI-limited pods on the default network card only (p5.48xlarge: 100)', () => {
    expect(eniLimitedPods({ name: 'p5.48xlarge', vcpu: 192, memoryMiB: 2097152, arch: 'x86_64', maxENIs: 2, ipv4PerENI: 50 }, 0)).toBe(100);
  });

  it('takes reserved ENIs off and gives 0 pods when none are left', () => {
    expect(eniLimitedPods(m5large, 1)).toBe(2 * 9 + 2);
    expect(eniLimitedPods(m5large, 3)).toBe(0);
  });

  it('applies maxPods, then podsPerCore, and ignores podsPerCore on Bottlerocket; Windows uses 110', () => {
    expect(podCapacity(m5large, { ...al2023, kubelet: { maxPods: 50 } })).toBe(50);
    expect(podCapacity(m5large, { ...al2023, kubelet: { podsPerCore: 4 } })).toBe(8);
    expect(podCapacity(m5large, { ...al2023, amiFamily: 'Bottlerocket', kubelet: { podsPerCore: 4 } })).toBe(29);
    expect(podCapacity(m5large, { ...al2023, amiFamily: 'Windows2022' })).toBe(110);
  });

  it('reserves cpu by the piecewise bands', () => {
    expect([1, 2, 4, 8, 96, 128].map((n) => kubeReservedCpu(n * 1000))).toEqual([60, 70, 80, 90, 310, 390]);
  });

  it('keeps kube-reserved memory on ENI-limited pods when maxPods is overridden (AL2023)', () => {
    const r = instanceResources(m5large, { ...al2023, kubelet: { maxPods: 110 } });
    expect(r.capacity.pods).toBe(110);
    expect(r.allocatable.memory).toBe(6903 * MiB); // 11 x 29 + 255, not 11 x 110 + 255
  });

  it('sizes ephemeral storage from the root volume, the family device, RAID0 instance storage, or the default', () => {
    const big = { ...al2023, blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '100Gi' } }] };
    expect(instanceResources(m5large, big).capacity['ephemeral-storage']).toBe(100 * GiB);
    const root = { ...al2023, blockDeviceMappings: [{ deviceName: '/dev/xvdz', rootVolume: true, ebs: { volumeSize: '50Gi' } }] };
    expect(instanceResources(m5large, root).capacity['ephemeral-storage']).toBe(50 * GiB);
    const raid = { ...al2023, instanceStorePolicy: 'RAID0' as const };
    expect(instanceResources({ ...m5large, instanceStorage: { totalSizeGB: 75, nvme: true } }, raid).capacity['ephemeral-storage']).toBe(75e9);
    expect(instanceResources(m5large, { ...al2023, amiFamily: 'Windows2019' }).capacity['ephemeral-storage']).toBe(50 * GiB);
  });

  it('honours evictionHard as a quantity or a percentage, and system-reserved', () => {
    const r = instanceResources(m5large, { ...al2023, kubelet: { evictionHard: { 'memory.available': '500Mi', 'nodefs.available': '5%' }, systemReserved: { cpu: '100m', pid: '100' } } });
    expect(r.overhead.memory).toBe((574 + 500) * MiB);
    expect(r.overhead['ephemeral-storage']).toBe(GiB + Math.ceil(20 * GiB * 0.05));
    expect(r.overhead.cpu).toBe(170);
  });

  it('names the kubelet field of an unparsable quantity', () => {
    expect(() => instanceResources(m5large, { ...al2023, kubelet: { kubeReserved: { memory: 'lots' } } })).toThrow(/spec\.kubelet\.kubeReserved\.memory/);
  });

  it('reports GPUs, Neuron devices and cores, EFA and pod ENIs as extended resources', () => {
    const r = instanceResources(
      { ...m5large, name: 'x', gpus: [{ count: 4, manufacturer: 'nvidia' }], neuronDevices: [{ count: 2, coresPerDevice: 2 }], efaMax: 1, podENIs: 9 },
      al2023,
    );
    expect(r.capacity).toMatchObject({ 'nvidia.com/gpu': 4, 'aws.amazon.com/neuron': 2, 'aws.amazon.com/neuroncore': 4, 'vpc.amazonaws.com/efa': 1, 'vpc.amazonaws.com/pod-eni': 9 });
  });
});
