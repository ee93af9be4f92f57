// The sizing settings an EC2NodeClass implies (AMI family, kubelet, block devices, instance-store policy,
// ENIs held by EFA-only interfaces on network card 0), plus the controller-wide settings. One mapping for
// the AWS provider and for what-if, so both size instance types alike.
import type { EC2NodeClass } from '../api/ec2nodeclass.ts';
import type { CapacitySettings } from './types.ts';

interface ControllerSizing {
  /** VM_MEMORY_OVERHEAD_PERCENT (the catalog's default when absent). */
  readonly vmMemoryOverheadPercent?: number;
  /** RESERVED_ENIS (default 0). */
  readonly reservedENIs?: number;
}

export function nodeClassCapacitySettings(nc: EC2NodeClass, s: ControllerSizing = {}): CapacitySettings {
  const spec = nc.spec;
  // aws-provider spec §ENI-limited pods: EFA-only interfaces on card 0 take ENIs away from pods.
  const efaOnCard0 = spec.networkInterfaces.filter(
    (n) => n.interfaceType === 'efa-only' && n.networkCardIndex === 0,
  ).length;
  const reservedENIs = (s.reservedENIs ?? 0) + efaOnCard0;
  return {
    ...(s.vmMemoryOverheadPercent !== undefined ? { vmMemoryOverheadPercent: s.vmMemoryOverheadPercent } : {}),
    ...(s.reservedENIs !== undefined || efaOnCard0 > 0 ? { reservedENIs } : {}),
    amiFamily: nc.amiFamily,
    ...(spec.kubelet ? { kubelet: spec.kubelet } : {}),
    blockDeviceMappings: spec.blockDeviceMappings.map((b) => ({
      ...(b.deviceName !== undefined ? { deviceName: b.deviceName } : {}),
      rootVolume: b.rootVolume,
      ...(b.ebs?.volumeSize !== undefined ? { volumeSize: b.ebs.volumeSize } : {}),
    })),
    ...(spec.instanceStorePolicy ? { instanceStorePolicy: spec.instanceStorePolicy } : {}),
  };
}
