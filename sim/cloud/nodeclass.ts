// What the simulated provider takes from an EC2NodeClass: the settings that change capacity and overhead
// (AMI family, kubelet, root volume), and a hash of the spec for drift (Karpenter's ec2nodeclass-hash,
// with the selector terms left out as it leaves them out: they drift through the resolved status instead).
import type { CapacitySettings, EC2NodeClass } from '../../engine/index.ts';
import { stableHash } from '../../controller/operator/hash.ts';

export const NODECLASS_HASH_ANNOTATION = 'karpenter.k8s.aws/ec2nodeclass-hash';
export const NODECLASS_HASH_VERSION_ANNOTATION = 'karpenter.k8s.aws/ec2nodeclass-hash-version';
export const NODECLASS_HASH_VERSION = 'v5';

export function capacitySettingsOf(nc: EC2NodeClass): CapacitySettings {
  const k = nc.spec.kubelet;
  const kubelet = k
    ? {
        ...(k.maxPods !== undefined ? { maxPods: k.maxPods } : {}),
        ...(k.podsPerCore !== undefined ? { podsPerCore: k.podsPerCore } : {}),
        ...(k.kubeReserved ? { kubeReserved: k.kubeReserved } : {}),
        ...(k.systemReserved ? { systemReserved: k.systemReserved } : {}),
        ...(k.evictionHard ? { evictionHard: k.evictionHard } : {}),
      }
    : undefined;
  return {
    amiFamily: nc.amiFamily,
    ...(kubelet ? { kubelet } : {}),
    blockDeviceMappings: nc.spec.blockDeviceMappings.map((m) => ({
      ...(m.deviceName ? { deviceName: m.deviceName } : {}),
      rootVolume: m.rootVolume,
      ...(m.ebs?.volumeSize ? { volumeSize: m.ebs.volumeSize } : {}),
    })),
    ...(nc.spec.instanceStorePolicy ? { instanceStorePolicy: nc.spec.instanceStorePolicy } : {}),
  };
}

/**
 * The hash of each parsed node class, worked out once: drift asks for it for every NodeClaim it checks, and
 * hashing the spec again each time was about 4% of the controller benchmark's allocations in steady churn (the AWS
 * provider reads the hash from the node class's annotation instead). A parsed node class is never changed; an
 * update parses a new one.
 */
const hashes = new WeakMap<EC2NodeClass, string>();

export function nodeClassHash(nc: EC2NodeClass): string {
  let h = hashes.get(nc);
  if (h === undefined) {
    h = hashSpec(nc);
    hashes.set(nc, h);
  }
  return h;
}

function hashSpec(nc: EC2NodeClass): string {
  const {
    subnetSelectorTerms: _s,
    securityGroupSelectorTerms: _g,
    amiSelectorTerms: _a,
    capacityReservationSelectorTerms: _c,
    amiFamily: _f,
    ...rest
  } = nc.spec;
  return stableHash({ ...rest, amiFamily: nc.amiFamily });
}
