// The simulated account's network and images: one private subnet per zone of the region, one security
// group, and AL2023/AL2/Bottlerocket images, tagged with `karpenter.sh/discovery: <cluster>` as the
// getting-started guides tag them. EC2NodeClass selector terms resolve against these the way the AWS
// provider resolves them against DescribeSubnets/DescribeSecurityGroups (tags ANDed within a term, "*"
// matching any value, terms ORed).
import { regionZones, type EC2NodeClass } from '../../engine/index.ts';

interface SimSubnet {
  readonly id: string;
  readonly zone: string;
  readonly zoneID: string;
  readonly cidr: string;
  readonly tags: Readonly<Record<string, string>>;
}

interface SimSecurityGroup {
  readonly id: string;
  readonly name: string;
  readonly tags: Readonly<Record<string, string>>;
}

/**
 * A capacity reservation in the simulated account (an ODCR, or a capacity block): `available` instances of
 * `total` are free; launches into it take one, terminations give it back.
 */
export interface SimCapacityReservation {
  readonly id: string;
  readonly instanceType: string;
  readonly zone: string;
  readonly total: number;
  available: number;
  readonly reservationType: 'default' | 'capacity-block';
  readonly instanceMatchCriteria: 'open' | 'targeted';
  readonly ownerID: string;
  readonly tags: Readonly<Record<string, string>>;
}

export interface SimNetwork {
  readonly region: string;
  readonly clusterName: string;
  readonly subnets: readonly SimSubnet[];
  readonly securityGroups: readonly SimSecurityGroup[];
  /** Capacity reservations of the account (addCapacityReservation). */
  readonly capacityReservations: SimCapacityReservation[];
}

const SIM_ACCOUNT_ID = '111122223333';

/** Adds a reservation to the account with `count` free instances (targeted ODCR unless told otherwise). */
export function addCapacityReservation(
  net: SimNetwork,
  r: {
    id: string;
    instanceType: string;
    zone: string;
    count: number;
    reservationType?: 'default' | 'capacity-block';
    instanceMatchCriteria?: 'open' | 'targeted';
    tags?: Record<string, string>;
  },
): SimCapacityReservation {
  if (!/^cr-[0-9a-z]+$/.test(r.id))
    throw new Error(`capacity reservation id "${r.id}" is not of the form cr-0123abcd...`);
  if (!Number.isInteger(r.count) || r.count < 0)
    throw new Error(`capacity reservation ${r.id}: count must be a whole number >= 0, got ${r.count}`);
  if (!net.subnets.some((s) => s.zone === r.zone))
    throw new Error(
      `capacity reservation ${r.id}: zone ${r.zone} is not a zone of ${net.region} (${net.subnets.map((s) => s.zone).join(', ')})`,
    );
  if (net.capacityReservations.some((c) => c.id === r.id))
    throw new Error(`capacity reservation ${r.id} is defined twice`);
  const cr: SimCapacityReservation = {
    id: r.id,
    instanceType: r.instanceType,
    zone: r.zone,
    total: r.count,
    available: r.count,
    reservationType: r.reservationType ?? 'default',
    instanceMatchCriteria: r.instanceMatchCriteria ?? 'targeted',
    ownerID: SIM_ACCOUNT_ID,
    tags: r.tags ?? {},
  };
  net.capacityReservations.push(cr);
  return cr;
}

const ZONE_ID_PREFIX: Readonly<Record<string, string>> = {
  'ap-northeast-2': 'apne2',
  'us-east-1': 'use1',
  'us-west-2': 'usw2',
};

export function simNetwork(
  region: string,
  clusterName: string,
  zones: readonly string[] = regionZones(region),
): SimNetwork {
  const prefix = ZONE_ID_PREFIX[region] ?? region.replaceAll('-', '');
  const subnets = zones.map((zone, i) => ({
    id: `subnet-0sim${String(i + 1).padStart(12, '0')}`,
    zone,
    zoneID: `${prefix}-az${i + 1}`,
    cidr: `10.0.${i * 32}.0/19`,
    tags: { 'karpenter.sh/discovery': clusterName, 'network-type': 'private', Name: `${clusterName}-private-${zone}` },
  }));
  const securityGroups = [
    {
      id: 'sg-0sim00000000000001',
      name: `${clusterName}-node`,
      tags: { 'karpenter.sh/discovery': clusterName, Name: `${clusterName}-node` },
    },
  ];
  return { region, clusterName, subnets, securityGroups, capacityReservations: [] };
}

type Term = { readonly tags?: Readonly<Record<string, string>>; readonly id?: string; readonly name?: string };

function termMatches(t: Term, o: { id: string; name?: string; tags: Readonly<Record<string, string>> }): boolean {
  if (t.id !== undefined && t.id !== o.id) return false;
  if (t.name !== undefined && t.name !== o.name) return false;
  for (const [k, v] of Object.entries(t.tags ?? {})) {
    if (!(k in o.tags) || (v !== '*' && o.tags[k] !== v)) return false;
  }
  return true;
}

export function selectSubnets(net: SimNetwork, nc: EC2NodeClass): SimSubnet[] {
  return net.subnets.filter((s) => nc.spec.subnetSelectorTerms.some((t) => termMatches(t, s)));
}

export function selectSecurityGroups(net: SimNetwork, nc: EC2NodeClass): SimSecurityGroup[] {
  return net.securityGroups.filter((g) => nc.spec.securityGroupSelectorTerms.some((t) => termMatches(t, g)));
}

/**
 * capacityReservationSelectorTerms against the account's reservations (as DescribeCapacityReservations: id,
 * or tags ANDed with ownerID and instanceMatchCriteria; terms ORed). Ids that match no reservation are
 * returned as problems naming the field.
 */
export function selectCapacityReservations(
  net: SimNetwork,
  nc: EC2NodeClass,
): { reservations: SimCapacityReservation[]; unknown: string[] } {
  const terms = nc.spec.capacityReservationSelectorTerms;
  const unknown = terms.flatMap((t, i) =>
    t.id && !net.capacityReservations.some((r) => r.id === t.id)
      ? [
          `spec.capacityReservationSelectorTerms[${i}].id: capacity reservation ${t.id} does not exist (or is not shared with this account)`,
        ]
      : [],
  );
  const reservations = net.capacityReservations.filter((r) =>
    terms.some(
      (t) =>
        termMatches({ ...(t.id !== undefined ? { id: t.id } : {}), ...(t.tags ? { tags: t.tags } : {}) }, r) &&
        (t.ownerID === undefined || t.ownerID === r.ownerID) &&
        (t.instanceMatchCriteria === undefined || t.instanceMatchCriteria === r.instanceMatchCriteria),
    ),
  );
  return { reservations, unknown };
}

/** The image the simulated AMI resolution picks for a family and architecture. */
export function simImageId(family: string, arch: string): string {
  const f = family.toLowerCase().replace(/[^a-z0-9]/g, '');
  return `ami-0sim${f}${arch === 'arm64' ? 'arm64' : 'amd64'}`;
}
