// Resource lists as Karpenter's metrics report them: cpu in cores, everything else in its base unit (a pod's
// limits are summed into its record: state/podrecord.ts).

/** A value as the metric shows it: millicores become cores. */
export const metricValue = (resource: string, v: number): number => (resource === 'cpu' ? v / 1000 : v);
