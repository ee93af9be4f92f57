// An EC2NodeClass and the operator settings -> the engine's capacity settings, and the capacity, overhead
// and allocatable of one instance type under them (engine/catalog allocatable.ts: Karpenter's formulas,
// spec/aws-provider.md §1). The engine does not model spec.networkInterfaces; this is the one place that
// adds it, with the engine's own inputs:
// * EFA-only interfaces declared on network card 0 take ENIs away from pods, exactly as RESERVED_ENIS does
//   (usableENIs = maxENIs − reservedENIs − EFA-only on card 0), so they are added to reservedENIs. Like
//   RESERVED_ENIS they do not change kube-reserved memory, which always uses the count with 0 reserved.
// * When spec.networkInterfaces is set, vpc.amazonaws.com/efa is the number of EFA-only interfaces in it
//   rather than the type's MaximumEfaInterfaces.
import {
  instanceResourcesWith, resolveCapacitySettings, type CapacitySettings, type EC2NodeClass, type Ec2InstanceInfo,
  type InstanceResources, type ResolvedCapacitySettings,
} from '../../../../engine/index.ts';
import type { AwsSettings } from '../settings.ts';

export interface NodeClassSizing {
  readonly nodeClass: string;
  readonly settings: ResolvedCapacitySettings;
  /** EFA-only interfaces in spec.networkInterfaces, when that list is set. */
  readonly efaInterfaces?: number;
}

// The engine's messages name the setting ("kubelet.kubeReserved.memory: ..."); the node class's fields are
// under spec. Operator settings (vmMemoryOverheadPercent, reservedENIs) were checked by validateSettings.
const SPEC_FIELD = /^(kubelet|blockDeviceMappings|instanceStorePolicy|amiFamily)\b/;

function inNodeClass<T>(nodeClass: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    const msg = (e as Error).message;
    throw new Error(`EC2NodeClass ${nodeClass}: ${SPEC_FIELD.test(msg) ? `spec.${msg}` : msg}`, { cause: e });
  }
}

export function capacitySettings(nc: EC2NodeClass, s: Pick<AwsSettings, 'vmMemoryOverheadPercent' | 'reservedENIs'>): CapacitySettings {
  const efaOnCard0 = nc.spec.networkInterfaces.filter((n) => n.interfaceType === 'efa-only' && n.networkCardIndex === 0).length;
  const spec = nc.spec;
  return {
    vmMemoryOverheadPercent: s.vmMemoryOverheadPercent,
    reservedENIs: s.reservedENIs + efaOnCard0,
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

/** Resolved once per node class; throws naming the node class and field when a setting is invalid. */
export function nodeClassSizing(nc: EC2NodeClass, s: Pick<AwsSettings, 'vmMemoryOverheadPercent' | 'reservedENIs'>): NodeClassSizing {
  const settings = inNodeClass(nc.name, () => resolveCapacitySettings(capacitySettings(nc, s)));
  const nis = nc.spec.networkInterfaces;
  return { nodeClass: nc.name, settings, ...(nis.length ? { efaInterfaces: nis.filter((n) => n.interfaceType === 'efa-only').length } : {}) };
}

/** The type's resources under the node class (its ENI facts are known: the provider skips types without them). */
export function sizeInstance(info: Ec2InstanceInfo, sizing: NodeClassSizing): InstanceResources {
  const facts = sizing.efaInterfaces === undefined ? info : { ...info, efaMax: sizing.efaInterfaces };
  return inNodeClass(sizing.nodeClass, () => instanceResourcesWith(facts, sizing.settings));
}
