import { describe, expect, it } from 'vitest';
import type { Requirements } from '../domain/types.ts';
import {
  ARCH_LABEL,
  CAPACITY_TYPE_LABEL,
  INSTANCE_TYPE_LABEL,
  OS_LABEL,
  REGION_LABEL,
  WINDOWS_BUILD_LABEL,
  ZONE_ID_LABEL,
  ZONE_LABEL,
} from '../scheduling/labels.ts';
import { formatRequirement } from '../scheduling/requirements.ts';
import { ec2InstanceInfos } from './catalog.ts';
import { catalogData } from './data.ts';
import {
  ec2InstanceRequirements,
  ec2TypeRequirements,
  INSTANCE_ACCELERATOR_NAME_LABEL,
  INSTANCE_CATEGORY_LABEL,
  INSTANCE_CAPABILITY_FLEX_LABEL,
  INSTANCE_GENERATION_LABEL,
  INSTANCE_GPU_COUNT_LABEL,
  INSTANCE_GPU_NAME_LABEL,
  INSTANCE_HYPERVISOR_LABEL,
  INSTANCE_LOCAL_NVME_LABEL,
  INSTANCE_TENANCY_LABEL,
  INSTANCE_FAMILY_LABEL,
  INSTANCE_SIZE_LABEL,
  lowerKebab,
} from './labels.ts';
import type { Ec2InstanceInfo } from './types.ts';

const info = (name: string): Ec2InstanceInfo => catalogData().byName.get(name)!.info;
const ctx = { region: 'us-west-2', zones: ['us-west-2a', 'us-west-2b'], capacityTypes: ['on-demand', 'spot'] };
const show = (reqs: Requirements, key: string) => formatRequirement(reqs.get(key)!);

describe('ec2InstanceRequirements', () => {
  it('puts region, zones, capacity types and OS from the context', () => {
    const r = ec2InstanceRequirements(info('m5.large'), ctx);
    expect(show(r, ZONE_LABEL)).toBe(`${ZONE_LABEL} In [us-west-2a us-west-2b]`);
    expect(show(r, REGION_LABEL)).toBe(`${REGION_LABEL} In [us-west-2]`);
    expect(show(r, CAPACITY_TYPE_LABEL)).toBe(`${CAPACITY_TYPE_LABEL} In [on-demand spot]`);
    expect(show(r, OS_LABEL)).toBe(`${OS_LABEL} In [linux]`);
    expect(show(r, WINDOWS_BUILD_LABEL)).toBe(`${WINDOWS_BUILD_LABEL} DoesNotExist`);
    expect(show(r, INSTANCE_TENANCY_LABEL)).toBe(`${INSTANCE_TENANCY_LABEL} In [dedicated default]`);
    expect(r.has(ZONE_ID_LABEL)).toBe(false);
  });

  it('adds zone-id only when the caller knows the ids', () => {
    const r = ec2InstanceRequirements(info('m5.large'), { ...ctx, zoneIds: ['usw2-az1', 'usw2-az2'] });
    expect(show(r, ZONE_ID_LABEL)).toBe(`${ZONE_ID_LABEL} In [usw2-az1 usw2-az2]`);
  });

  it('Windows families: os windows and the build on amd64, an empty OS set on arm64', () => {
    const w = ec2InstanceRequirements(info('m5.large'), { ...ctx, amiFamily: 'Windows2022' });
    expect(show(w, OS_LABEL)).toBe(`${OS_LABEL} In [windows]`);
    expect(show(w, WINDOWS_BUILD_LABEL)).toBe(`${WINDOWS_BUILD_LABEL} In [10.0.20348]`);
    const arm = ec2InstanceRequirements(info('c6g.large'), { ...ctx, amiFamily: 'Windows2019' });
    expect(show(arm, OS_LABEL)).toBe(`${OS_LABEL} DoesNotExist`);
    expect(show(arm, ARCH_LABEL)).toBe(`${ARCH_LABEL} In [arm64]`);
  });

  it('derives category and generation with Karpenter name scheme, including the -Ntb form', () => {
    const u = ec2InstanceRequirements(info('u-6tb1.112xlarge'), ctx);
    expect(show(u, INSTANCE_CATEGORY_LABEL)).toBe(`${INSTANCE_CATEGORY_LABEL} In [u]`);
    expect(show(u, INSTANCE_GENERATION_LABEL)).toBe(`${INSTANCE_GENERATION_LABEL} In [1]`);
    expect(show(u, INSTANCE_FAMILY_LABEL)).toBe(`${INSTANCE_FAMILY_LABEL} In [u-6tb1]`);
    const flex = ec2InstanceRequirements(info('m7i-flex.large'), ctx);
    expect(show(flex, INSTANCE_CAPABILITY_FLEX_LABEL)).toBe(`${INSTANCE_CAPABILITY_FLEX_LABEL} In [true]`);
    const odd = ec2InstanceRequirements({ name: 'weird', vcpu: 1, memoryMiB: 1024, arch: 'x86_64' }, ctx);
    for (const k of [INSTANCE_CATEGORY_LABEL, INSTANCE_GENERATION_LABEL, INSTANCE_FAMILY_LABEL, INSTANCE_SIZE_LABEL])
      expect(show(odd, k)).toBe(`${k} DoesNotExist`);
  });

  it('bare metal has the empty hypervisor value; local NVMe only with NVMe storage', () => {
    expect([...ec2InstanceRequirements(info('m5.metal'), ctx).get(INSTANCE_HYPERVISOR_LABEL)!.values]).toEqual(['']);
    expect(show(ec2InstanceRequirements(info('m5d.large'), ctx), INSTANCE_LOCAL_NVME_LABEL)).toBe(
      `${INSTANCE_LOCAL_NVME_LABEL} In [75]`,
    );
    const hdd = { ...info('m5d.large'), instanceStorage: { totalSizeGB: 2000, nvme: false } };
    expect(show(ec2InstanceRequirements(hdd, ctx), INSTANCE_LOCAL_NVME_LABEL)).toBe(
      `${INSTANCE_LOCAL_NVME_LABEL} DoesNotExist`,
    );
  });

  it('GPU labels need exactly one GPU entry; unknown GPU facts stay DoesNotExist', () => {
    const two = {
      ...info('m5.large'),
      gpus: [
        { count: 1, name: 'A', manufacturer: 'NVIDIA' },
        { count: 1, name: 'B', manufacturer: 'NVIDIA' },
      ],
    };
    expect(show(ec2InstanceRequirements(two, ctx), INSTANCE_GPU_NAME_LABEL)).toBe(
      `${INSTANCE_GPU_NAME_LABEL} DoesNotExist`,
    );
    const p3 = ec2InstanceRequirements(info('p3.2xlarge'), ctx);
    expect(show(p3, INSTANCE_GPU_COUNT_LABEL)).toBe(`${INSTANCE_GPU_COUNT_LABEL} In [1]`);
    expect(show(p3, INSTANCE_GPU_NAME_LABEL)).toBe(`${INSTANCE_GPU_NAME_LABEL} DoesNotExist`);
  });

  it('accelerator labels from a Neuron device (manufacturer aws) or a single inference accelerator', () => {
    const neuron = { ...info('m5.large'), neuronDevices: [{ count: 2, name: 'Inferentia2', coresPerDevice: 2 }] };
    expect(show(ec2InstanceRequirements(neuron, ctx), INSTANCE_ACCELERATOR_NAME_LABEL)).toBe(
      `${INSTANCE_ACCELERATOR_NAME_LABEL} In [inferentia2]`,
    );
    const q = ec2InstanceRequirements(info('dl2q.24xlarge'), ctx);
    expect(show(q, INSTANCE_ACCELERATOR_NAME_LABEL)).toBe(`${INSTANCE_ACCELERATOR_NAME_LABEL} In [qualcomm-ai100]`);
  });

  it('lowerKebab is Karpenter lowerKabobCase', () => {
    expect(lowerKebab('Radeon Pro V520')).toBe('radeon-pro-v520');
    expect(lowerKebab('NVIDIA')).toBe('nvidia');
  });
});

describe('ec2TypeRequirements', () => {
  it('shares each requirement object between the types that have it, keeping the name its own', () => {
    const infos = ec2InstanceInfos().filter((i) => i.name === 'm5.large' || i.name === 'm5.xlarge');
    expect(infos.map((i) => i.name).sort()).toEqual(['m5.large', 'm5.xlarge']);
    const [a, b] = infos.map((i) => new Map(ec2TypeRequirements(i).map((r) => [r.key, r])));
    expect(a!.get(INSTANCE_FAMILY_LABEL)).toBe(b!.get(INSTANCE_FAMILY_LABEL));
    expect(a!.get(ARCH_LABEL)).toBe(b!.get(ARCH_LABEL));
    expect(a!.get(INSTANCE_TYPE_LABEL)).not.toBe(b!.get(INSTANCE_TYPE_LABEL));
    expect([...a!.get(INSTANCE_TYPE_LABEL)!.values]).toEqual([infos[0]!.name]);
    // The size label differs, so it is not shared, and each list is the caller's own array.
    expect(a!.get(INSTANCE_SIZE_LABEL)).not.toBe(b!.get(INSTANCE_SIZE_LABEL));
    expect(ec2TypeRequirements(infos[0]!)).not.toBe(ec2TypeRequirements(infos[0]!));
  });
});
