// The shape of zz_generated.catalog.json, shared by the generator (scripts/gen-catalog.ts) that writes it and
// data.ts that reads it. Rows are arrays in ROW_FIELDS order to keep the file small and diffable.

/** Order of the values in one instance-type row. */
export const ROW_FIELDS = [
  'name',
  'vcpu',
  'memoryMiB',
  'arch',
  'maxENIs',
  'ipv4PerENI',
  'eniLimitedPods',
  'podENIs',
  'efaMax',
  'gpu',
  'accelerator',
  'localNvmeGB',
  'cpuManufacturer',
  'sustainedClockSpeedMhz',
  'hypervisor',
  'encryptionInTransitSupported',
  'ebsBandwidthMbps',
  'networkBandwidthMbps',
  'onDemandSupported',
  'spotSupported',
] as const;

/** [count, name, manufacturer, memoryMiB] of a single-entry GpuInfo. */
export type GpuCell = [number, string | null, string | null, number | null];
/** [count, name, manufacturer, coresPerDevice]; coresPerDevice is null for non-Neuron accelerators. */
export type AcceleratorCell = [number, string | null, string | null, number | null];

export type CatalogRow = [
  name: string,
  vcpu: number,
  memoryMiB: number,
  arch: 'x86_64' | 'arm64',
  maxENIs: number | null,
  ipv4PerENI: number | null,
  eniLimitedPods: number | null,
  /** null for a type Karpenter's VPC limits table lacks (then ipv4PerENI, if any, came from elsewhere). */
  podENIs: number | null,
  efaMax: number | null,
  gpu: GpuCell | null,
  accelerator: AcceleratorCell | null,
  localNvmeGB: number | null,
  cpuManufacturer: string | null,
  sustainedClockSpeedMhz: number | null,
  hypervisor: string | null,
  encryptionInTransitSupported: boolean | null,
  ebsBandwidthMbps: number | null,
  networkBandwidthMbps: number | null,
  onDemandSupported: boolean | null,
  spotSupported: boolean | null,
];

export interface CatalogRegion {
  readonly zones: readonly string[];
  /** Where this region's on-demand prices come from, in words. */
  readonly onDemandSource: string;
  readonly spotSource: string;
  /** Aligned with rows: the region's own on-demand table value, or null (then the fallback region's applies). */
  readonly onDemand: readonly (number | null)[];
  /** Aligned with rows: Spot Advisor estimate on-demand × (1 − savings/100), or null when not listed or unpriced. */
  readonly spot: readonly (number | null)[];
}

export interface CatalogFile {
  readonly _meta: {
    readonly generatedBy: string;
    readonly note: string;
    readonly fields: readonly string[];
    readonly sources: Readonly<Record<string, string>>;
    readonly excluded: Readonly<Record<string, readonly string[]>>;
  };
  /** The region whose on-demand table fills gaps in the others (Karpenter's startup fallback). */
  readonly fallbackRegion: string;
  readonly rows: readonly CatalogRow[];
  readonly regions: Readonly<Record<string, CatalogRegion>>;
}

/**
 * Per type: the region's own on-demand price when its table has one, else the fallback (us-east-1) table's,
 * which is what Karpenter uses for a whole region it ships no table for until the Pricing API answers.
 */
export function effectiveOnDemand(
  regional: number | null | undefined,
  fallback: number | null | undefined,
): number | undefined {
  return regional ?? fallback ?? undefined;
}

/** Spot Advisor estimate: on-demand × (1 − savings% / 100). */
export function spotEstimate(onDemand: number, savingsPercent: number): number {
  return onDemand * (1 - savingsPercent / 100);
}
