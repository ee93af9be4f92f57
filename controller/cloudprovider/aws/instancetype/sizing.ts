// An EC2NodeClass and the operator settings -> the engine's capacity settings, and the capacity, overhead
// and allocatable of one instance type under them (engine/catalog allocatable.ts: Karpenter's formulas,
// docs/karpenter/aws-provider.md §1), with the engine's mapping of the node class (nodeClassCapacitySettings):
// * EFA-only interfaces declared on network card 0 take ENIs away from pods, exactly as RESERVED_ENIS does
//   (usableENIs = maxENIs − reservedENIs − EFA-only on card 0); the engine adds them to reservedENIs. Like
//   RESERVED_ENIS they do not change kube-reserved memory, which always uses the count with 0 reserved.
// * Here: when spec.networkInterfaces is set, vpc.amazonaws.com/efa is the number of EFA-only interfaces in it
//   rather than the type's MaximumEfaInterfaces.
import {
  instanceResourcesWith,
  nodeClassCapacitySettings,
  resolveCapacitySettings,
  type CapacitySettings,
  type EC2NodeClass,
  type Ec2InstanceInfo,
  type InstanceResources,
  type ResolvedCapacitySettings,
} from '../../../../engine/index.ts';
import type { AwsSettings } from '../settings.ts';

interface NodeClassSizing {
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

function capacitySettings(
  nc: EC2NodeClass,
  s: Pick<AwsSettings, 'vmMemoryOverheadPercent' | 'reservedENIs'>,
): CapacitySettings {
  return nodeClassCapacitySettings(nc, {
    vmMemoryOverheadPercent: s.vmMemoryOverheadPercent,
    reservedENIs: s.reservedENIs,
  });
}

/** Resolved once per node class; throws naming the node class and field when a setting is invalid. */
export function nodeClassSizing(
  nc: EC2NodeClass,
  s: Pick<AwsSettings, 'vmMemoryOverheadPercent' | 'reservedENIs'>,
): NodeClassSizing {
  const settings = inNodeClass(nc.name, () => resolveCapacitySettings(capacitySettings(nc, s)));
  const nis = nc.spec.networkInterfaces;
  return {
    nodeClass: nc.name,
    settings,
    ...(nis.length ? { efaInterfaces: nis.filter((n) => n.interfaceType === 'efa-only').length } : {}),
  };
}

/** The type's resources under the node class (its ENI facts are known: the provider skips types without them). */
export function sizeInstance(info: Ec2InstanceInfo, sizing: NodeClassSizing): InstanceResources {
  const facts = sizing.efaInterfaces === undefined ? info : { ...info, efaMax: sizing.efaInterfaces };
  return inNodeClass(sizing.nodeClass, () => instanceResourcesWith(facts, sizing.settings));
}
