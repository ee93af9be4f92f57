// AMI resolution for an EC2NodeClass (docs/karpenter/aws-provider.md §5): an alias reads SSM public parameters; other
// terms query DescribeImages (ids merged into one image-id filter, tags as tag filters, name with owners
// self+amazon unless given, ssmParameter read from SSM). Per unique requirement set the newest
// non-deprecated image wins.
import type { Image } from '@aws-sdk/client-ec2';
import {
  reqs,
  type AMISelectorTerm,
  type EC2NodeClass,
  type NodeSelectorRequirement,
  type Requirements,
} from '../../../../engine/index.ts';
import type { Ec2Port, Filter, SsmPort } from '../sdk.ts';
import type { TtlCache } from '../ttl-cache.ts';
import { aliasParameters, parseAlias, variantRequirements, type AmiRequirement, type Variant } from './ami-alias.ts';
import { describeTerms, tagFilters } from './network.ts';

interface ResolvedAmi {
  readonly id: string;
  readonly name?: string;
  readonly deprecated: boolean;
  readonly creationDate?: string;
  readonly requirements: readonly AmiRequirement[];
}

interface AmiDeps {
  readonly ec2: Ec2Port;
  readonly ssm: SsmPort;
  /** "1.31": from the API server (or EKS) version. */
  readonly kubernetesVersion: string;
  /** ms since the epoch, to judge DeprecationTime. */
  readonly now: number;
  /** SSM values by parameter name (24 h for public parameters, 5 min for user parameters in Karpenter). */
  readonly ssmCache?: TtlCache<string, string>;
}

/** A resolution failure whose message is fit for the AMIsReady condition. */
export class AmiResolutionError extends Error {
  override name = 'AmiResolutionError';
}

/** Karpenter caches public parameters 24 h and user-supplied ones 5 min. */
const USER_PARAMETER_TTL_MS = 5 * 60_000;

async function readParameter(deps: AmiDeps, name: string, ttlMs?: number): Promise<string | undefined> {
  const cached = deps.ssmCache?.get(name);
  if (cached !== undefined) return cached;
  const v = await deps.ssm.getParameter(name);
  if (v !== undefined) deps.ssmCache?.set(name, v, ttlMs);
  return v;
}

interface Query {
  readonly filters: Filter[];
  readonly owners?: string[];
  /** image id -> the variants it serves (alias queries only). */
  readonly known?: ReadonlyMap<string, { arch: string; variants: readonly Variant[] }>;
}

async function aliasQuery(alias: string, deps: AmiDeps): Promise<Query> {
  const parsed = parseAlias(alias);
  let params;
  try {
    params = aliasParameters(parsed, deps.kubernetesVersion);
  } catch (e) {
    throw new AmiResolutionError((e as Error).message, { cause: e });
  }
  const known = new Map<string, { arch: string; variants: Variant[] }>();
  const missing: string[] = [];
  for (const p of params) {
    const id = await readParameter(deps, p.path);
    if (id === undefined) {
      missing.push(p.path);
      continue;
    }
    const cur = known.get(id);
    if (cur) cur.variants.push(...p.variants);
    else known.set(id, { arch: p.arch, variants: [...p.variants] });
  }
  if (known.size === 0) {
    throw new AmiResolutionError(
      `no AMI found for alias ${alias} on Kubernetes ${deps.kubernetesVersion}: none of the SSM parameters exist (${missing.join(', ')})`,
    );
  }
  return { filters: [{ Name: 'image-id', Values: [...known.keys()] }], known };
}

async function termQueries(terms: readonly AMISelectorTerm[], deps: AmiDeps): Promise<Query[]> {
  const ids: string[] = [];
  const out: Query[] = [];
  for (const t of terms) {
    if (t.id) ids.push(t.id);
    if (t.ssmParameter) {
      const v = await readParameter(deps, t.ssmParameter, USER_PARAMETER_TTL_MS);
      if (v === undefined)
        throw new AmiResolutionError(`amiSelectorTerms ssmParameter ${t.ssmParameter} does not exist`);
      if (!v.startsWith('ami-'))
        throw new AmiResolutionError(
          `amiSelectorTerms ssmParameter ${t.ssmParameter} holds "${v}", which is not an AMI id (ami-...)`,
        );
      ids.push(v);
    }
    if (t.name || t.tags) {
      const filters = [...(t.name ? [{ Name: 'name', Values: [t.name] }] : []), ...tagFilters(t.tags ?? {})];
      out.push({ filters, owners: t.owner ? [t.owner] : t.name ? ['self', 'amazon'] : [] });
    }
  }
  if (ids.length) out.unshift({ filters: [{ Name: 'image-id', Values: ids }] });
  return out;
}

const requirementKey = (r: readonly AmiRequirement[]): string =>
  JSON.stringify([...r].map((x) => [x.key, x.operator, [...(x.values ?? [])].sort()]).sort());

function isDeprecated(img: Image, now: number): boolean {
  return img.DeprecationTime !== undefined && Date.parse(img.DeprecationTime) <= now;
}

/** Non-deprecated first, then newest CreationDate, then name, then id. */
function compareImages(a: ResolvedAmi, b: ResolvedAmi): number {
  if (a.deprecated !== b.deprecated) return a.deprecated ? 1 : -1;
  const byDate = (b.creationDate ?? '').localeCompare(a.creationDate ?? '');
  return byDate || (a.name ?? '').localeCompare(b.name ?? '') || a.id.localeCompare(b.id);
}

/** The images for a node class; the family (spec.amiFamily, else the alias's) is the engine parser's. */
export async function resolveAmis(nc: Pick<EC2NodeClass, 'spec' | 'amiFamily'>, deps: AmiDeps): Promise<ResolvedAmi[]> {
  const { spec, amiFamily: family } = nc;
  const alias = spec.amiSelectorTerms.find((t) => t.alias)?.alias;
  const queries = alias ? [await aliasQuery(alias, deps)] : await termQueries(spec.amiSelectorTerms, deps);
  const candidates: ResolvedAmi[] = [];
  for (const q of queries) {
    for (const img of await deps.ec2.describeImages({
      filters: q.filters,
      ...(q.owners?.length ? { owners: q.owners } : {}),
    })) {
      if (!img.ImageId) continue;
      const known = q.known?.get(img.ImageId);
      const arch = img.Architecture ?? known?.arch ?? 'x86_64';
      const base = {
        id: img.ImageId,
        ...(img.Name ? { name: img.Name } : {}),
        deprecated: isDeprecated(img, deps.now),
        ...(img.CreationDate ? { creationDate: img.CreationDate } : {}),
      };
      const variants: Array<Variant | undefined> = known ? [...known.variants] : [undefined];
      for (const v of variants) candidates.push({ ...base, requirements: variantRequirements(arch, v, family) });
    }
  }
  const best = new Map<string, ResolvedAmi>();
  for (const c of candidates.sort(compareImages)) {
    const k = requirementKey(c.requirements);
    if (!best.has(k)) best.set(k, c);
  }
  const out = [...best.values()].sort(compareImages);
  if (out.length === 0) {
    throw new AmiResolutionError(`no AMI matches amiSelectorTerms [${describeTerms(spec.amiSelectorTerms)}]`);
  }
  return out;
}

const OPERATORS: ReadonlySet<string> = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']);

/** status.amis with their requirements as a requirement set (drift and launch map instance types to AMIs). */
export function statusAmis(nc: EC2NodeClass): Array<{ readonly id: string; readonly requirements: Requirements }> {
  return nc.status.amis.map((a, i) => {
    const list = (a.requirements ?? []).map((r, j): NodeSelectorRequirement => {
      if (!OPERATORS.has(r.operator))
        throw new Error(
          `EC2NodeClass ${nc.name}: status.amis[${i}].requirements[${j}].operator "${r.operator}" is not a node selector operator`,
        );
      return { key: r.key, operator: r.operator as NodeSelectorRequirement['operator'], values: r.values ?? [] };
    });
    return { id: a.id, requirements: reqs.fromSelectorRequirements(list) };
  });
}
