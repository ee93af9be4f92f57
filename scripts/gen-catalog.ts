// Generates engine/catalog/zz_generated.catalog.json (the EC2 facts and prices the engine imports) and
// engine/catalog/testdata/zz_generated.docs-vectors.json (Karpenter's published allocatable and labels, the
// golden vectors the formulas are tested against) from the committed AWS data (test/fixtures/data/aws, see its README).
//
//   node --import tsx scripts/gen-catalog.ts [dataDir]
//
// dataDir defaults to $KARPENTER_TS_AWS_DATA, else test/fixtures/data/aws in the repository. The
// output depends only on the input files, so a test can regenerate it and compare with what is committed.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AcceleratorCell, CatalogFile, CatalogRegion, CatalogRow, GpuCell } from '../engine/catalog/format.ts';
import { effectiveOnDemand, ROW_FIELDS, spotEstimate } from '../engine/catalog/format.ts';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CATALOG_PATH = join(REPO_ROOT, 'engine/catalog/zz_generated.catalog.json');
export const VECTORS_PATH = join(REPO_ROOT, 'engine/catalog/testdata/zz_generated.docs-vectors.json');

export function defaultDataDir(): string {
  return process.env['KARPENTER_TS_AWS_DATA'] ?? join(REPO_ROOT, 'test/fixtures/data/aws');
}

/** The standard zones per region (letters as AWS lists them for most accounts). */
const REGION_ZONES: Readonly<Record<string, readonly string[]>> = {
  'ap-northeast-2': ['a', 'b', 'c', 'd'].map((z) => `ap-northeast-2${z}`),
  'us-east-1': ['a', 'b', 'c', 'd', 'e', 'f'].map((z) => `us-east-1${z}`),
  'us-west-2': ['a', 'b', 'c', 'd'].map((z) => `us-west-2${z}`),
};
const FALLBACK_REGION = 'us-east-1';

interface RawRecord {
  name: string;
  family: string;
  vcpu: number | null;
  memoryMiB: number | null;
  architectures: string[] | null;
  cpuManufacturer: string | null;
  sustainedClockSpeedMhz: number | null;
  gpu: { count: number; name: string | null; manufacturer: string | null; memoryMiB: number | null } | null;
  accelerator: { count: number; name: string | null; manufacturer: string | null; neuronCores?: number } | null;
  localNvmeGB: number | null;
  hypervisor: string | null;
  defaultNetworkCardMaxENIs: number | null;
  ipv4PerENI: number | null;
  trunkingCompatible: boolean | null;
  branchENIs: number | null;
  eniLimitedMaxPods: number | null;
  efaMax: number | null;
  networkBandwidthMbps: number | null;
  ebsBandwidthMbps: number | null;
  encryptionInTransitSupported: boolean | null;
  usageClasses: { onDemand: boolean | null; spot: boolean | null } | null;
  inKarpenterDocs: boolean;
  karpenterLabels?: Record<string, string>;
  karpenterAllocatableAL2023?: Record<string, string>;
}

function readJson(dir: string, file: string): unknown {
  const path = join(dir, file);
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`reading ${path}: ${(e as Error).message}`, { cause: e });
  }
}

function need<T>(v: T | null | undefined, what: string): T {
  if (v === undefined || v === null) throw new Error(`AWS data: ${what} is missing`);
  return v;
}

/** Why Karpenter's discovery or our formulas cannot take this record; undefined when they can. */
function exclusion(r: RawRecord): string | undefined {
  if (r.family.startsWith('mac')) return 'mac (not hvm x86_64/arm64 in discovery)';
  if (r.vcpu === null || r.memoryMiB === null) return 'vcpu or memory unknown';
  const arch = r.architectures?.[0];
  if (arch !== 'x86_64' && arch !== 'arm64') return 'architecture unknown';
  const eni = r.defaultNetworkCardMaxENIs !== null && r.ipv4PerENI !== null;
  if (!eni && r.eniLimitedMaxPods === null) return 'ENI limits unknown (pods cannot be computed)';
  return undefined;
}

function toRow(r: RawRecord): CatalogRow {
  const eni = r.defaultNetworkCardMaxENIs !== null && r.ipv4PerENI !== null;
  const gpu: GpuCell | null = r.gpu ? [r.gpu.count, r.gpu.name, r.gpu.manufacturer, r.gpu.memoryMiB] : null;
  const a = r.accelerator;
  // The data gives a Neuron type's total cores; Karpenter's inputs are cores per device (NeuronDevices[].CoreInfo).
  if (a?.neuronCores !== undefined && (a.count <= 0 || a.neuronCores % a.count !== 0)) {
    throw new Error(`AWS data: ${r.name}.accelerator has ${a.neuronCores} neuron cores over ${a.count} devices`);
  }
  const accel: AcceleratorCell | null = a
    ? [a.count, a.name, a.manufacturer, a.neuronCores === undefined ? null : a.neuronCores / a.count]
    : null;
  return [
    r.name,
    r.vcpu!,
    r.memoryMiB!,
    r.architectures![0] as 'x86_64' | 'arm64',
    r.defaultNetworkCardMaxENIs,
    r.ipv4PerENI,
    eni ? null : r.eniLimitedMaxPods,
    // Trunking is a VPC-limits fact: a type without it is not in the table.
    r.trunkingCompatible === null ? null : r.trunkingCompatible ? need(r.branchENIs, `${r.name}.branchENIs`) : 0,
    r.efaMax,
    gpu,
    accel,
    r.localNvmeGB,
    r.cpuManufacturer,
    r.sustainedClockSpeedMhz,
    r.hypervisor,
    r.encryptionInTransitSupported,
    r.ebsBandwidthMbps,
    r.networkBandwidthMbps,
    r.usageClasses?.onDemand ?? null,
    r.usageClasses?.spot ?? null,
  ];
}

interface PriceFile {
  _meta: { sources: Record<string, string> };
  karpenterStatic: Record<string, Record<string, number>>;
  regional: Record<string, { source: string; asOf: string; prices: Record<string, number> }>;
}
interface SpotFile {
  _meta: { sources: Record<string, string> };
  spotAdvisor: { regions: Record<string, { Linux: Record<string, { s: number; r: number }> }> };
}

function regionEntry(
  region: string,
  names: readonly string[],
  prices: PriceFile,
  spot: SpotFile,
  sources: Record<string, string>,
): CatalogRegion {
  const table =
    region === FALLBACK_REGION
      ? need(prices.karpenterStatic[region], `karpenterStatic.${region}`)
      : need(prices.regional[region], `regional.${region}`).prices;
  const fallback = need(prices.karpenterStatic[FALLBACK_REGION], `karpenterStatic.${FALLBACK_REGION}`);
  const advisor = need(spot.spotAdvisor.regions[region], `spotAdvisor.regions.${region}`).Linux;
  const onDemand = names.map((n) => table[n] ?? null);
  const spotPrices = names.map((n, i) => {
    const od = effectiveOnDemand(onDemand[i], fallback[n]);
    const listed = advisor[n];
    return od !== undefined && listed ? spotEstimate(od, listed.s) : null;
  });
  const own = onDemand.filter((p) => p !== null).length;
  const onDemandSource =
    region === FALLBACK_REGION
      ? `${sources['karpenter-aws']}: Karpenter's compiled us-east-1 table (${own} of ${names.length} types)`
      : `regional table ${prices.regional[region]!.source} (see _meta.sources) as of ${prices.regional[region]!.asOf} for ${own} of ` +
        `${names.length} types; the others use the ${FALLBACK_REGION} Karpenter table, Karpenter's startup fallback for regions it ships no table for`;
  const spotSource = `estimate from ${sources['spotAdvisor']} savings %: on-demand × (1 − s/100); not a live price`;
  return { zones: REGION_ZONES[region]!, onDemandSource, spotSource, onDemand, spot: spotPrices };
}

/** Karpenter docs resource names, in the order vector rows hold them. */
const VECTOR_RESOURCES = [
  'cpu',
  'memory',
  'ephemeral-storage',
  'pods',
  'vpc.amazonaws.com/pod-eni',
  'vpc.amazonaws.com/efa',
  'nvidia.com/gpu',
  'amd.com/gpu',
  'aws.amazon.com/neuron',
  'aws.amazon.com/neuroncore',
] as const;

function vectorsFile(records: readonly RawRecord[]): string {
  const docs = records.filter((r) => r.inKarpenterDocs);
  const labelKeys = [
    ...new Set(docs.flatMap((r) => Object.keys(need(r.karpenterLabels, `${r.name}.karpenterLabels`)))),
  ].sort();
  for (const r of docs) {
    for (const k of Object.keys(need(r.karpenterAllocatableAL2023, `${r.name}.karpenterAllocatableAL2023`))) {
      if (!(VECTOR_RESOURCES as readonly string[]).includes(k))
        throw new Error(`AWS data: ${r.name} has an unexpected allocatable resource ${k}`);
    }
  }
  const rows = docs.map((r) => [
    r.name,
    VECTOR_RESOURCES.map((k) => r.karpenterAllocatableAL2023![k] ?? null),
    labelKeys.map((k) => r.karpenterLabels![k] ?? null),
  ]);
  const head = {
    _meta: {
      note: "Karpenter's published allocatable (AL2023, defaults) and labels per type; generated by scripts/gen-catalog.ts from instance-types.json",
      resources: VECTOR_RESOURCES,
      labelKeys,
    },
  };
  return `{\n"_meta": ${JSON.stringify(head._meta)},\n"rows": [\n${rows.map((r) => JSON.stringify(r)).join(',\n')}\n]\n}\n`;
}

interface Generated {
  readonly catalog: string;
  readonly vectors: string;
}

export function generateCatalog(dataDir: string = defaultDataDir()): Generated {
  const types = readJson(dataDir, 'instance-types.json') as {
    _meta: { sources: Record<string, string> };
    instanceTypes: RawRecord[];
  };
  const prices = readJson(dataDir, 'prices-on-demand.json') as PriceFile;
  const spot = readJson(dataDir, 'spot-prices.sample.json') as SpotFile;
  if (!Array.isArray(types.instanceTypes)) throw new Error('AWS data: instance-types.json has no instanceTypes array');
  const sources = { ...types._meta.sources, ...prices._meta.sources, ...spot._meta.sources };
  const excluded: Record<string, string[]> = {};
  const kept: RawRecord[] = [];
  for (const r of types.instanceTypes) {
    const why = exclusion(r);
    if (why) (excluded[why] ??= []).push(r.name);
    else kept.push(r);
  }
  kept.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const list of Object.values(excluded)) list.sort();
  const names = kept.map((r) => r.name);
  const regions: Record<string, CatalogRegion> = {};
  for (const region of Object.keys(REGION_ZONES).sort())
    regions[region] = regionEntry(region, names, prices, spot, sources);
  const file: CatalogFile = {
    _meta: {
      generatedBy: 'scripts/gen-catalog.ts (do not edit by hand; a test regenerates and compares)',
      note: 'EC2 instance-type facts and prices for the engine. Spot prices are estimates from the Spot Advisor savings feed, not live prices. See engine/catalog/README.md.',
      fields: ROW_FIELDS,
      sources,
      excluded,
    },
    fallbackRegion: FALLBACK_REGION,
    rows: kept.map(toRow),
    regions,
  };
  return { catalog: formatCatalog(file), vectors: vectorsFile(kept) };
}

/** One row per line and one price array per line: small diffs when a fact changes. */
function formatCatalog(f: CatalogFile): string {
  const regions = Object.entries(f.regions).map(([name, r]) => {
    const fields = Object.entries(r).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    return `  ${JSON.stringify(name)}: {\n${fields.join(',\n')}\n  }`;
  });
  return [
    '{',
    `"_meta": ${JSON.stringify(f._meta, null, 1)},`,
    `"fallbackRegion": ${JSON.stringify(f.fallbackRegion)},`,
    '"rows": [',
    f.rows.map((r) => JSON.stringify(r)).join(',\n'),
    '],',
    '"regions": {',
    regions.join(',\n'),
    '}',
    '}',
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const dir = process.argv[2] ?? defaultDataDir();
  const out = generateCatalog(dir);
  writeFileSync(CATALOG_PATH, out.catalog);
  mkdirSync(dirname(VECTORS_PATH), { recursive: true });
  writeFileSync(VECTORS_PATH, out.vectors);
  console.log(
    `wrote ${CATALOG_PATH} (${out.catalog.length} bytes) and ${VECTORS_PATH} (${out.vectors.length} bytes) from ${dir}`,
  );
}
