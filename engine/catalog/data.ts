// The generated catalog, decoded once into Ec2InstanceInfo records and per-region price tables. The JSON
// arrives as a module import (the engine reads no files); decoding is cached at module level because the
// data is immutable.
import raw from './zz_generated.catalog.json' with { type: 'json' };
import type { CatalogFile, CatalogRow } from './format.ts';
import { effectiveOnDemand, ROW_FIELDS } from './format.ts';
import type { Ec2InstanceInfo, GpuDevice, InferenceAccelerator, NeuronDevice } from './types.ts';

export interface CatalogEntry {
  readonly info: Ec2InstanceInfo;
  /** SupportedUsageClasses evidence: true, false, or null when no source says. */
  readonly onDemandSupported: boolean | null;
  readonly spotSupported: boolean | null;
}

type OnDemandPriceSource = 'regional' | 'fallback';

export interface RegionPrices {
  readonly zones: readonly string[];
  readonly onDemandSource: string;
  readonly spotSource: string;
  /** Per type name: on-demand price and where it came from. Absent = no price known. */
  readonly onDemand: ReadonlyMap<string, { readonly price: number; readonly source: OnDemandPriceSource }>;
  /** Per type name: Spot Advisor estimate. Absent = not listed for the region, or no on-demand price. */
  readonly spot: ReadonlyMap<string, number>;
}

interface DecodedCatalog {
  readonly entries: readonly CatalogEntry[];
  readonly byName: ReadonlyMap<string, CatalogEntry>;
  readonly regions: ReadonlyMap<string, RegionPrices>;
  readonly fallbackRegion: string;
  readonly sources: Readonly<Record<string, string>>;
  readonly excluded: Readonly<Record<string, readonly string[]>>;
}

/** Copies only the known fields: an optional property is absent, never undefined. */
function pick<T extends object>(o: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined) out[k] = v;
  return out as T;
}

function decodeRow(row: CatalogRow): CatalogEntry {
  const [
    name,
    vcpu,
    memoryMiB,
    arch,
    maxENIs,
    ipv4PerENI,
    eniLimitedPods,
    podENIs,
    efaMax,
    gpu,
    accel,
    localNvmeGB,
    cpuManufacturer,
    sustainedClockSpeedMhz,
    hypervisor,
    encryptionInTransitSupported,
    ebsBandwidthMbps,
    networkBandwidthMbps,
    onDemandSupported,
    spotSupported,
  ] = row;
  const gpus: GpuDevice[] | undefined = gpu
    ? [pick<GpuDevice>({ count: gpu[0], name: gpu[1], manufacturer: gpu[2], memoryMiB: gpu[3] })]
    : undefined;
  let neuronDevices: NeuronDevice[] | undefined;
  let inferenceAccelerators: InferenceAccelerator[] | undefined;
  // Neuron devices (Inferentia, Trainium) carry a core count; other accelerators (Qualcomm) do not.
  if (accel && accel[3] !== null)
    neuronDevices = [pick<NeuronDevice>({ count: accel[0], name: accel[1], coresPerDevice: accel[3] })];
  else if (accel)
    inferenceAccelerators = [pick<InferenceAccelerator>({ count: accel[0], name: accel[1], manufacturer: accel[2] })];
  // The catalog's ENI limits come from the VPC limits table for every type it has (podENIs is null otherwise).
  const vpcIPv4PerInterface = podENIs === null ? null : ipv4PerENI;
  const info = pick<Ec2InstanceInfo>({
    name,
    vcpu,
    memoryMiB,
    arch,
    maxENIs,
    ipv4PerENI,
    eniLimitedPods,
    podENIs,
    vpcIPv4PerInterface,
    efaMax,
    gpus,
    neuronDevices,
    inferenceAccelerators,
    instanceStorage: localNvmeGB === null ? undefined : { totalSizeGB: localNvmeGB, nvme: true },
    cpuManufacturer,
    sustainedClockSpeedMhz,
    hypervisor,
    encryptionInTransitSupported,
    ebsBandwidthMbps,
    networkBandwidthMbps,
  });
  return { info, onDemandSupported, spotSupported };
}

function decode(file: CatalogFile): DecodedCatalog {
  if (file._meta.fields.join() !== ROW_FIELDS.join())
    throw new Error('zz_generated.catalog.json: row fields differ from format.ts; regenerate it');
  const entries = file.rows.map(decodeRow);
  const fallback = file.regions[file.fallbackRegion];
  if (!fallback) throw new Error(`zz_generated.catalog.json: fallback region ${file.fallbackRegion} has no prices`);
  const regions = new Map<string, RegionPrices>();
  for (const [region, r] of Object.entries(file.regions)) {
    const onDemand = new Map<string, { price: number; source: OnDemandPriceSource }>();
    const spot = new Map<string, number>();
    entries.forEach((e, i) => {
      const own = r.onDemand[i];
      const price = effectiveOnDemand(own, fallback.onDemand[i]);
      if (price !== undefined) onDemand.set(e.info.name, { price, source: own != null ? 'regional' : 'fallback' });
      const s = r.spot[i];
      if (s != null) spot.set(e.info.name, s);
    });
    regions.set(region, { zones: r.zones, onDemandSource: r.onDemandSource, spotSource: r.spotSource, onDemand, spot });
  }
  return {
    entries,
    byName: new Map(entries.map((e) => [e.info.name, e])),
    regions,
    fallbackRegion: file.fallbackRegion,
    sources: file._meta.sources,
    excluded: file._meta.excluded,
  };
}

let decoded: DecodedCatalog | undefined;

export function catalogData(): DecodedCatalog {
  decoded ??= decode(raw as unknown as CatalogFile);
  return decoded;
}
