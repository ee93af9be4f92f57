// Subnet and security-group selection (docs/karpenter/aws-provider.md §5 "Subnets and SGs"). Each selector term is
// one filter set (its tags and cidr ANDed; a "*" tag value becomes a tag-key filter); all id terms merge into one
// subnet-id/group-id filter set and SG name terms into one group-name set. Results are ORed across sets and
// deduplicated.
import type { Filter, Ec2Port } from '../sdk.ts';
import type { SecurityGroupSelectorTerm, SubnetSelectorTerm } from '../../../../engine/index.ts';

export function tagFilters(tags: Readonly<Record<string, string>>): Filter[] {
  return Object.entries(tags).map(([k, v]) =>
    v === '*' ? { Name: 'tag-key', Values: [k] } : { Name: `tag:${k}`, Values: [v] },
  );
}

/** A cidr term matches the subnet whose IPv4 CIDR block is exactly that (EC2 filter cidr-block), ANDed with its tags. */
export function subnetFilterSets(terms: readonly SubnetSelectorTerm[]): Filter[][] {
  const ids = terms.flatMap((t) => (t.id ? [t.id] : []));
  const sets: Filter[][] = ids.length ? [[{ Name: 'subnet-id', Values: ids }]] : [];
  for (const t of terms) {
    const set = [...(t.cidr ? [{ Name: 'cidr-block', Values: [t.cidr] }] : []), ...tagFilters(t.tags ?? {})];
    if (set.length) sets.push(set);
  }
  return sets;
}

export function securityGroupFilterSets(terms: readonly SecurityGroupSelectorTerm[]): Filter[][] {
  const ids = terms.flatMap((t) => (t.id ? [t.id] : []));
  const names = terms.flatMap((t) => (t.name ? [t.name] : []));
  const sets: Filter[][] = [];
  if (ids.length) sets.push([{ Name: 'group-id', Values: ids }]);
  if (names.length) sets.push([{ Name: 'group-name', Values: names }]);
  for (const t of terms) if (t.tags && Object.keys(t.tags).length) sets.push(tagFilters(t.tags));
  return sets;
}

/** A term as people wrote it, for messages: {tags: {karpenter.sh/discovery: my-cluster}}. */
export function describeTerms(terms: readonly object[]): string {
  return terms
    .map((t) => {
      const parts = Object.entries(t).map(([k, v]) =>
        typeof v === 'object' && v
          ? `${k}: {${Object.entries(v as Record<string, string>)
              .map(([a, b]) => `${a}: ${b}`)
              .join(', ')}}`
          : `${k}: ${String(v)}`,
      );
      return `{${parts.join(', ')}}`;
    })
    .join(', ');
}

export interface ResolvedSubnet {
  readonly id: string;
  readonly zone: string;
  readonly zoneId?: string;
  readonly availableIps: number;
  readonly tags: Readonly<Record<string, string>>;
}

interface ResolvedSecurityGroup {
  readonly id: string;
  readonly name?: string;
}

export async function resolveSubnets(ec2: Ec2Port, terms: readonly SubnetSelectorTerm[]): Promise<ResolvedSubnet[]> {
  const found = new Map<string, ResolvedSubnet>();
  for (const filters of subnetFilterSets(terms)) {
    for (const s of await ec2.describeSubnets(filters)) {
      if (!s.SubnetId || !s.AvailabilityZone || s.State === 'failed') continue;
      const tags = Object.fromEntries((s.Tags ?? []).flatMap((t) => (t.Key ? [[t.Key, t.Value ?? '']] : [])));
      found.set(s.SubnetId, {
        id: s.SubnetId,
        zone: s.AvailabilityZone,
        ...(s.AvailabilityZoneId ? { zoneId: s.AvailabilityZoneId } : {}),
        availableIps: s.AvailableIpAddressCount ?? 0,
        tags,
      });
    }
  }
  // Most free addresses first (status.subnets order), ties by id for stable output.
  return [...found.values()].sort((a, b) => b.availableIps - a.availableIps || a.id.localeCompare(b.id));
}

export async function resolveSecurityGroups(
  ec2: Ec2Port,
  terms: readonly SecurityGroupSelectorTerm[],
): Promise<ResolvedSecurityGroup[]> {
  const found = new Map<string, ResolvedSecurityGroup>();
  for (const filters of securityGroupFilterSets(terms)) {
    for (const g of await ec2.describeSecurityGroups(filters)) {
      if (!g.GroupId) continue;
      found.set(g.GroupId, { id: g.GroupId, ...(g.GroupName ? { name: g.GroupName } : {}) });
    }
  }
  return [...found.values()].sort((a, b) => a.id.localeCompare(b.id));
}
