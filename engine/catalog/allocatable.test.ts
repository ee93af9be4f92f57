import { describe, expect, it } from 'vitest';
import {
  eniLimitedPods,
  evictionThreshold,
  extendedResources,
  instanceResources,
  kubeReservedCpu,
  memoryCapacity,
  NVIDIA_GPU,
  AMD_GPU,
  HABANA_GAUDI,
  AWS_NEURON,
  AWS_NEURON_CORE,
  EFA,
  POD_ENI,
  PRIVATE_IPV4_ADDRESS,
} from './allocatable.ts';
import { catalogData } from './data.ts';
import type { CapacitySettings, Ec2InstanceInfo } from './types.ts';

const Mi = 2 ** 20;
const Gi = 2 ** 30;

function info(name: string): Ec2InstanceInfo {
  const e = catalogData().byName.get(name);
  if (!e) throw new Error(`no ${name} in the catalog`);
  return e.info;
}

const m5large = () => info('m5.large');
const res = (name: string, settings: CapacitySettings = {}) => instanceResources(info(name), settings);

describe('worked examples of docs/karpenter/aws-provider.md §1', () => {
  it('m5.large: 7577Mi capacity, 6903Mi / 1930m / 17Gi allocatable, 29 pods', () => {
    const r = res('m5.large');
    expect(r.capacity.memory).toBe(7577 * Mi);
    expect(r.allocatable.memory).toBe(6903 * Mi);
    expect(r.allocatable.cpu).toBe(1930);
    expect(r.allocatable['ephemeral-storage']).toBe(17 * Gi);
    expect(r.capacity.pods).toBe(29);
    expect(r.kubeReserved.memory).toBe(574 * Mi);
  });

  it('t4g.micro: arm64 loses 64 MiB before the VM overhead: 888Mi', () => {
    expect(res('t4g.micro').capacity.memory).toBe(888 * Mi);
    expect(memoryCapacity({ ...info('t4g.micro'), arch: 'x86_64' })).toBe((1024 - 77) * Mi);
  });

  it('p5.48xlarge: pods from the default network card (2 ENIs), not the 64 of the instance: 100', () => {
    expect(res('p5.48xlarge').capacity.pods).toBe(100);
    expect(res('p5.48xlarge').capacity[EFA]).toBe(32);
    expect(res('p5.48xlarge').capacity[NVIDIA_GPU]).toBe(8);
  });

  it('kube-reserved cpu bands, each truncated: 60/70/80/90/310/390m', () => {
    expect([1, 2, 4, 8, 96, 128].map((c) => kubeReservedCpu(c * 1000))).toEqual([60, 70, 80, 90, 310, 390]);
    expect(kubeReservedCpu(1500)).toBe(65);
    expect(kubeReservedCpu(500)).toBe(30);
    // 5 vCPUs: the last band gives 2.5m, truncated to 2m.
    expect(kubeReservedCpu(5000)).toBe(82);
    expect(kubeReservedCpu(2100)).toBe(70);
  });
});

describe('extended resources', () => {
  it('counts GPUs by manufacturer, Neuron devices and cores, EFA and pod ENIs; zeros are dropped', () => {
    const base = { name: 'x.large', vcpu: 4, memoryMiB: 4096, arch: 'x86_64', maxENIs: 2, ipv4PerENI: 4 } as const;
    expect(extendedResources(base)).toEqual({});
    const gpus = [
      { count: 2, manufacturer: 'NVIDIA' },
      { count: 1, manufacturer: 'nvidia' },
      { count: 4, manufacturer: 'AMD' },
      { count: 8, manufacturer: 'Habana' },
    ];
    expect(extendedResources({ ...base, gpus, efaMax: 1, podENIs: 5 })).toEqual({
      [NVIDIA_GPU]: 3,
      [AMD_GPU]: 4,
      [HABANA_GAUDI]: 8,
      [EFA]: 1,
      [POD_ENI]: 5,
    });
    expect(extendedResources({ ...base, neuronDevices: [{ count: 16, coresPerDevice: 2 }] })).toEqual({
      [AWS_NEURON]: 16,
      [AWS_NEURON_CORE]: 32,
    });
  });

  it('inf2.24xlarge: 6 neuron devices, 12 cores', () => {
    expect(res('inf2.24xlarge').capacity).toMatchObject({ [AWS_NEURON]: 6, [AWS_NEURON_CORE]: 12 });
  });

  it("Windows amd64 adds PrivateIPv4Address = the VPC limits table's IPv4 per interface − 1, 0 for a type the table lacks", () => {
    expect(extendedResources(m5large(), 'Windows2022')[PRIVATE_IPV4_ADDRESS]).toBe(9);
    // g2.2xlarge has interface data (15 IPv4 per ENI) but no VPC limits entry: 0 (dropped with the other zeros).
    expect(info('g2.2xlarge').ipv4PerENI).toBe(15);
    expect(extendedResources(info('g2.2xlarge'), 'Windows2022')[PRIVATE_IPV4_ADDRESS]).toBeUndefined();
    expect(extendedResources({ ...m5large(), vpcIPv4PerInterface: 4 }, 'Windows2022')[PRIVATE_IPV4_ADDRESS]).toBe(3);
    expect(extendedResources(info('c6g.large'), 'Windows2022')[PRIVATE_IPV4_ADDRESS]).toBeUndefined();
    expect(extendedResources(m5large(), 'AL2023')[PRIVATE_IPV4_ADDRESS]).toBeUndefined();
  });
});

describe('pods', () => {
  it('maxPods wins; AL2023 kube-reserved memory stays on the ENI-limited count', () => {
    const r = res('m5.large', { kubelet: { maxPods: 110 } });
    expect(r.capacity.pods).toBe(110);
    expect(r.kubeReserved.memory).toBe((11 * 29 + 255) * Mi);
  });

  it('podsPerCore caps pods at podsPerCore × vCPUs, except on Bottlerocket', () => {
    expect(res('m5.large', { kubelet: { podsPerCore: 4 } }).capacity.pods).toBe(8);
    expect(res('m5.large', { kubelet: { podsPerCore: 40 } }).capacity.pods).toBe(29);
    expect(res('m5.large', { kubelet: { podsPerCore: 4 }, amiFamily: 'Bottlerocket' }).capacity.pods).toBe(29);
    expect(res('m5.large', { kubelet: { podsPerCore: 4, maxPods: 6 } }).capacity.pods).toBe(6);
  });

  it('Bottlerocket sizes kube-reserved memory by the pods it will run (maxPods)', () => {
    const r = res('m5.large', { amiFamily: 'Bottlerocket', kubelet: { maxPods: 110 } });
    expect(r.capacity.pods).toBe(110);
    expect(r.kubeReserved.memory).toBe((11 * 110 + 255) * Mi);
  });

  it('Windows: 110 pods, kube-reserved memory by 110, 50Gi ephemeral on /dev/sda1', () => {
    const r = res('m5.large', { amiFamily: 'Windows2019' });
    expect(r.capacity.pods).toBe(110);
    expect(r.kubeReserved.memory).toBe((11 * 110 + 255) * Mi);
    expect(r.capacity['ephemeral-storage']).toBe(50 * Gi);
    expect(
      res('m5.large', {
        amiFamily: 'Windows2019',
        blockDeviceMappings: [{ deviceName: '/dev/sda1', volumeSize: '80Gi' }],
      }).capacity['ephemeral-storage'],
    ).toBe(80 * Gi);
  });

  it('reservedENIs lowers pods but not kube-reserved memory; no usable ENI means 0 pods', () => {
    const r = res('m5.large', { reservedENIs: 1 });
    expect(r.capacity.pods).toBe(2 * 9 + 2);
    expect(r.kubeReserved.memory).toBe(574 * Mi);
    expect(res('m5.large', { reservedENIs: 3 }).capacity.pods).toBe(0);
    expect(res('m5.large', { reservedENIs: 5 }).capacity.pods).toBe(0);
  });

  it('types known only by their ENI-limited count work with reservedENIs 0 and refuse more', () => {
    const hpc = info('hpc7a.96xlarge');
    expect(hpc.maxENIs).toBeUndefined();
    expect(eniLimitedPods(hpc)).toBe(100);
    expect(() => eniLimitedPods(hpc, 1)).toThrow(
      /hpc7a\.96xlarge: maxENIs and ipv4PerENI are unknown and reservedENIs 1 needs them/,
    );
  });
});

describe('ephemeral storage', () => {
  it('rootVolume mapping wins over the family device', () => {
    const bdm = [
      { deviceName: '/dev/xvda', volumeSize: '50Gi' },
      { deviceName: '/dev/xvdb', rootVolume: true, volumeSize: '200Gi' },
    ];
    const r = res('m5.large', { blockDeviceMappings: bdm });
    expect(r.capacity['ephemeral-storage']).toBe(200 * Gi);
    expect(r.evictionThreshold['ephemeral-storage']).toBe(20 * Gi);
    expect(r.allocatable['ephemeral-storage']).toBe(200 * Gi - Gi - 20 * Gi);
  });

  it('the family device mapping: /dev/xvda for AL2023, /dev/xvdb for Bottlerocket; unknown devices fall back to 20Gi', () => {
    const bdm = [
      { deviceName: '/dev/xvda', volumeSize: '4Gi' },
      { deviceName: '/dev/xvdb', volumeSize: '100Gi' },
    ];
    expect(res('m5.large', { blockDeviceMappings: bdm }).capacity['ephemeral-storage']).toBe(4 * Gi);
    expect(res('m5.large', { blockDeviceMappings: bdm, amiFamily: 'Bottlerocket' }).capacity['ephemeral-storage']).toBe(
      100 * Gi,
    );
    expect(
      res('m5.large', { blockDeviceMappings: [{ deviceName: '/dev/sdf', volumeSize: '1Ti' }] }).capacity[
        'ephemeral-storage'
      ],
    ).toBe(20 * Gi);
  });

  it('Custom uses the last mapping, or 20Gi when it has no size', () => {
    const bdm = [
      { deviceName: '/dev/xvda', volumeSize: '30Gi' },
      { deviceName: '/dev/xvdc', volumeSize: '60Gi' },
    ];
    expect(res('m5.large', { amiFamily: 'Custom', blockDeviceMappings: bdm }).capacity['ephemeral-storage']).toBe(
      60 * Gi,
    );
    expect(
      res('m5.large', { amiFamily: 'Custom', blockDeviceMappings: [{ deviceName: '/dev/xvdc' }] }).capacity[
        'ephemeral-storage'
      ],
    ).toBe(20 * Gi);
  });

  it('RAID0 uses the instance store in decimal GB, and is ignored without one', () => {
    expect(res('m5d.large', { instanceStorePolicy: 'RAID0' }).capacity['ephemeral-storage']).toBe(75e9);
    expect(res('m5.large', { instanceStorePolicy: 'RAID0' }).capacity['ephemeral-storage']).toBe(20 * Gi);
  });
});

describe('overhead overrides', () => {
  it('evictionHard: absolute or % of capacity rounded up; 100% disables', () => {
    const mem = 7577 * Mi;
    const eph = 20 * Gi;
    expect(evictionThreshold(mem, eph)).toEqual({ memory: 100 * Mi, 'ephemeral-storage': 2 * Gi });
    expect(evictionThreshold(mem, eph, { 'memory.available': '5%', 'nodefs.available': '15%' })).toEqual({
      memory: Math.ceil((mem / 100) * 5),
      'ephemeral-storage': Math.ceil((eph / 100) * 15),
    });
    expect(evictionThreshold(mem, eph, { 'memory.available': '500Mi', 'nodefs.available': '100%' })).toEqual({
      memory: 500 * Mi,
      'ephemeral-storage': 0,
    });
    expect(res('m5.large', { kubelet: { evictionHard: { 'memory.available': '1Gi' } } }).allocatable.memory).toBe(
      (7577 - 574 - 1024) * Mi,
    );
  });

  it('kubeReserved replaces per key; systemReserved adds; pid never reduces allocatable', () => {
    const r = res('m5.large', {
      kubelet: { kubeReserved: { cpu: '200m' }, systemReserved: { memory: '1Gi', pid: '1000' } },
    });
    expect(r.kubeReserved).toEqual({ cpu: 200, memory: 574 * Mi, 'ephemeral-storage': Gi });
    expect(r.allocatable.cpu).toBe(1800);
    expect(r.allocatable.memory).toBe((6903 - 1024) * Mi);
    expect(r.overhead.pid).toBe(1000);
    expect(r.allocatable.pid).toBeUndefined();
  });

  it('vmMemoryOverheadPercent changes the memory capacity', () => {
    expect(res('m5.large', { vmMemoryOverheadPercent: 0 }).capacity.memory).toBe(8192 * Mi);
    expect(res('m5.large', { vmMemoryOverheadPercent: 0.1 }).capacity.memory).toBe((8192 - 820) * Mi);
  });
});

describe('bad settings get errors that name the field', () => {
  it.each<[CapacitySettings, RegExp]>([
    [{ vmMemoryOverheadPercent: -0.1 }, /vmMemoryOverheadPercent: -0.1 must be a number in \[0, 1\)/],
    [{ reservedENIs: 1.5 }, /reservedENIs: 1.5 must be a non-negative integer/],
    [{ kubelet: { maxPods: -1 } }, /kubelet.maxPods: -1/],
    [{ amiFamily: 'Ubuntu' as never }, /amiFamily: "Ubuntu" is not one of AL2, AL2023/],
    [{ kubelet: { kubeReserved: { gpu: '1' } } }, /kubelet.kubeReserved.gpu: unknown key/],
    [
      { kubelet: { systemReserved: { memory: 'lots' } } },
      /kubelet.systemReserved.memory: "lots" is not a valid quantity/,
    ],
    [
      { kubelet: { evictionHard: { 'memory.available': 'abc%' } } },
      /kubelet.evictionHard.memory.available: "abc%" is not a percentage/,
    ],
    [
      { blockDeviceMappings: [{ rootVolume: true, volumeSize: 'big' }] },
      /blockDeviceMappings\[0\].ebs.volumeSize: "big" is not a valid quantity/,
    ],
    [{ instanceStorePolicy: 'RAID5' as never }, /instanceStorePolicy: "RAID5" must be RAID0 or unset/],
  ])('%j', (settings, message) => {
    expect(() => instanceResources(m5large(), settings)).toThrow(message);
  });
});
