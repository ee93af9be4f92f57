// Custom catalogs: instance types a user describes, for clouds other than AWS, synthetic benchmarks (bench/scenarios/
// packing.ts), or what-if runs against hypothetical types. A ProvisionInput takes any instance types per NodePool;
// this builds them from plain data (JSON or YAML) with the checks the EC2 catalog gets from its generator.
// docs/solver.md ("Custom catalogs") shows the format.
import { parseResources } from '../domain/resources.ts';
import type { InstanceType, Offering, Resources } from '../domain/types.ts';
import { ARCH_LABEL, CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, OS_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { req, requirements } from '../scheduling/requirements.ts';

interface CustomOfferingSpec {
  readonly zone: string;
  readonly capacityType: 'on-demand' | 'spot' | 'reserved';
  /** US dollars per hour. */
  readonly price: number;
  readonly available?: boolean;
  readonly reservationId?: string;
  readonly reservationCapacity?: number;
}

interface CustomInstanceTypeSpec {
  readonly name: string;
  /** Kubernetes quantities ({ cpu: '4', memory: '16Gi', pods: 110, 'nvidia.com/gpu': 1 }). */
  readonly capacity: Readonly<Record<string, string | number>>;
  /** What the kubelet and system reserve (default none): allocatable is capacity less this. */
  readonly overhead?: Readonly<Record<string, string | number>>;
  /** Labels every node of the type carries (default: kubernetes.io/arch amd64, kubernetes.io/os linux). */
  readonly labels?: Readonly<Record<string, string>>;
  readonly offerings: readonly CustomOfferingSpec[];
}

export class CustomCatalogError extends Error {
  override name = 'CustomCatalogError';
}

const CAPACITY_TYPES = new Set(['on-demand', 'spot', 'reserved']);

function resources(spec: unknown, where: string): Resources {
  if (spec === undefined) return {};
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    throw new CustomCatalogError(`${where}: must be a map of resource quantities`);
  try {
    return parseResources(spec as Record<string, string | number>);
  } catch (e) {
    throw new CustomCatalogError(`${where}.${(e as Error).message}`, { cause: e });
  }
}

function offering(o: unknown, where: string): Offering {
  const s = o as Partial<CustomOfferingSpec> | null;
  if (typeof s !== 'object' || s === null) throw new CustomCatalogError(`${where}: must be an object`);
  if (typeof s.zone !== 'string' || !s.zone) throw new CustomCatalogError(`${where}.zone: must be a non-empty string`);
  if (typeof s.capacityType !== 'string' || !CAPACITY_TYPES.has(s.capacityType))
    throw new CustomCatalogError(
      `${where}.capacityType: must be on-demand, spot or reserved, got ${JSON.stringify(s.capacityType)}`,
    );
  if (typeof s.price !== 'number' || !Number.isFinite(s.price) || s.price < 0)
    throw new CustomCatalogError(
      `${where}.price: must be a number >= 0 (US dollars per hour), got ${JSON.stringify(s.price)}`,
    );
  if (
    s.capacityType === 'reserved' &&
    (typeof s.reservationId !== 'string' || !Number.isInteger(s.reservationCapacity) || s.reservationCapacity! < 0)
  ) {
    throw new CustomCatalogError(
      `${where}: a reserved offering needs reservationId and an integer reservationCapacity >= 0`,
    );
  }
  return {
    zone: s.zone,
    capacityType: s.capacityType,
    price: s.price,
    available: s.available ?? true,
    ...(s.reservationId !== undefined ? { reservationId: s.reservationId } : {}),
    ...(s.reservationCapacity !== undefined ? { reservationCapacity: s.reservationCapacity } : {}),
  };
}

function instanceType(spec: unknown, where: string): InstanceType {
  const s = spec as Partial<CustomInstanceTypeSpec> | null;
  if (typeof s !== 'object' || s === null) throw new CustomCatalogError(`${where}: must be an object`);
  if (typeof s.name !== 'string' || !s.name) throw new CustomCatalogError(`${where}.name: must be a non-empty string`);
  const at = `${where} (${s.name})`;
  const capacity = resources(s.capacity, `${at}.capacity`);
  if (!Object.keys(capacity).length) throw new CustomCatalogError(`${at}.capacity: must name at least one resource`);
  const overhead = resources(s.overhead, `${at}.overhead`);
  const allocatable: Record<string, number> = {};
  for (const [k, v] of Object.entries(capacity)) {
    allocatable[k] = v - (overhead[k] ?? 0);
    if (allocatable[k]! < 0) throw new CustomCatalogError(`${at}.overhead.${k}: exceeds the capacity`);
  }
  if (!Array.isArray(s.offerings) || !s.offerings.length)
    throw new CustomCatalogError(`${at}.offerings: must list at least one offering`);
  const offerings = s.offerings.map((o, i) => offering(o, `${at}.offerings[${i}]`));
  const labels: Record<string, string> = { [ARCH_LABEL]: 'amd64', [OS_LABEL]: 'linux', ...(s.labels ?? {}) };
  const available = offerings.filter((o) => o.available);
  return {
    name: s.name,
    requirements: requirements(
      req(INSTANCE_TYPE_LABEL, false, [s.name]),
      ...Object.entries(labels).map(([k, v]) => req(k, false, [v])),
      req(
        ZONE_LABEL,
        false,
        available.map((o) => o.zone),
      ),
      req(
        CAPACITY_TYPE_LABEL,
        false,
        available.map((o) => o.capacityType),
      ),
    ),
    capacity,
    overhead,
    allocatable,
    offerings,
  };
}

/** Instance types from plain data; a malformed entry is an error naming it and the field. */
export function customInstanceTypes(specs: unknown): InstanceType[] {
  if (!Array.isArray(specs)) throw new CustomCatalogError('instance types: must be a list');
  const out = specs.map((s, i) => instanceType(s, `instanceTypes[${i}]`));
  const seen = new Set<string>();
  for (const it of out) {
    if (seen.has(it.name)) throw new CustomCatalogError(`instance types: ${it.name} is listed twice`);
    seen.add(it.name);
  }
  return out;
}
