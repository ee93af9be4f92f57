// Karpenter's words for minValues that cannot be met (core, main after v1.14.1): the error
// cloudprovider.InstanceTypes.SatisfiesMinValues returns (the keys as Go prints a string slice: in brackets,
// space-separated; sorted here, where Go's map order is random), and the pod error of
// scheduler.Results.TruncateInstanceTypes when the instance types kept on a NodeClaim lose them. Consolidation's
// events and provisioning's FailedScheduling carry these texts, so alerts written for Karpenter match.

/** `minValues requirement is not met for label(s) (label(s)=[a b])`. */
export function minValuesNotMet(keys: readonly string[]): string {
  return `minValues requirement is not met for label(s) (label(s)=[${[...keys].sort().join(' ')}])`;
}

/** The pod error when truncating a NodeClaim's instance types (to the most a launch takes) breaks minValues. */
export function minValuesTruncated(nodePool: string, keys: readonly string[]): string {
  return `pod didn\u2019t schedule because NodePool couldn\u2019t meet minValues requirements, validating minValues, ${minValuesNotMet(keys)} (NodePool=${nodePool})`;
}
