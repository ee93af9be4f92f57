// Golden vectors: Karpenter's published allocatable resources and labels for every instance type in its
// generated docs (AL2023, default settings), against this folder's formulas and label rules applied to the
// catalog's facts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nonZero, parseResources } from '../domain/resources.ts';
import { AWS_WELL_KNOWN as AWS_WELL_KNOWN_LABELS } from '../api/labels.ts';
import {
  CAPACITY_TYPE_LABEL,
  REGION_LABEL,
  WINDOWS_BUILD_LABEL,
  ZONE_ID_LABEL,
  ZONE_LABEL,
} from '../scheduling/labels.ts';
import { operatorOf, singleValueLabels } from '../scheduling/requirements.ts';
import { instanceResources, POD_ENI } from './allocatable.ts';
import { catalogData } from './data.ts';
import { ec2InstanceRequirements, INSTANCE_NETWORK_BANDWIDTH_LABEL, INSTANCE_TENANCY_LABEL } from './labels.ts';

const NOT_TYPE_LABELS = new Set<string>([
  ZONE_ID_LABEL,
  INSTANCE_TENANCY_LABEL,
  'karpenter.k8s.aws/ec2nodeclass',
  'karpenter.k8s.aws/placement-group-id',
  'karpenter.k8s.aws/placement-group-partition',
]);

interface VectorFile {
  _meta: { resources: string[]; labelKeys: string[] };
  rows: [string, (string | null)[], (string | null)[]][];
}

function zip(keys: readonly string[], values: readonly (string | null)[]): Record<string, string> {
  const out: Record<string, string> = {};
  keys.forEach((k, i) => {
    const v = values[i];
    if (v !== null && v !== undefined) out[k] = v;
  });
  return out;
}

const file = JSON.parse(
  readFileSync(new URL('./testdata/zz_generated.docs-vectors.json', import.meta.url), 'utf8'),
) as VectorFile;
const vectors = file.rows.map(([name, alloc, labels]) => ({
  name,
  allocatable: zip(file._meta.resources, alloc),
  labels: zip(file._meta.labelKeys, labels),
}));

// The bandwidth table (2026-08-18) is newer than the docs (2026-07-11) and re-rated these g7 sizes; the docs
// print 60000, 60000 and 80000.
const NEWER_BANDWIDTH: Readonly<Record<string, Record<string, string>>> = {
  'g7.2xlarge': { [INSTANCE_NETWORK_BANDWIDTH_LABEL]: '40000' },
  'g7.4xlarge': { [INSTANCE_NETWORK_BANDWIDTH_LABEL]: '80000' },
  'g7.8xlarge': { [INSTANCE_NETWORK_BANDWIDTH_LABEL]: '100000' },
};

function infoOf(name: string) {
  const e = catalogData().byName.get(name);
  if (!e) throw new Error(`${name} is in Karpenter's docs but not in the catalog`);
  return e.info;
}

describe('Karpenter docs vectors', () => {
  it('cover every docs type (1363)', () => {
    expect(vectors.length).toBe(1363);
    for (const v of vectors) expect(catalogData().byName.has(v.name), v.name).toBe(true);
  });

  it('allocatable cpu, memory, pods, ephemeral-storage and extended resources equal the docs for every type', () => {
    const mismatches: string[] = [];
    const newerPodEni: string[] = [];
    for (const v of vectors) {
      const got = nonZero(instanceResources(infoOf(v.name)).allocatable);
      const want = parseResources(v.allocatable);
      for (const k of new Set([...Object.keys(got), ...Object.keys(want)])) {
        if (got[k] === want[k]) continue;
        // The VPC-limits table (2026-08-18) is newer than the docs (2026-07-11): it made more types
        // trunking-compatible, so they gain pod-eni capacity the docs do not list yet.
        if (k === POD_ENI && want[k] === undefined) newerPodEni.push(v.name);
        else mismatches.push(`${v.name} ${k}: got ${got[k]} want ${want[k]}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(newerPodEni.length).toBe(56);
    expect(newerPodEni).toContain('c9g.large');
  });

  it('labels equal the docs for every type, and every other AWS well-known label is DoesNotExist', () => {
    const context = new Set([ZONE_LABEL, REGION_LABEL, CAPACITY_TYPE_LABEL]);
    const mismatches: string[] = [];
    for (const v of vectors) {
      const reqs = ec2InstanceRequirements(infoOf(v.name), {
        region: 'us-east-1',
        zones: ['us-east-1a'],
        capacityTypes: ['on-demand'],
      });
      const labels = Object.fromEntries(Object.entries(singleValueLabels(reqs)).filter(([k]) => !context.has(k)));
      const want = { ...v.labels, ...NEWER_BANDWIDTH[v.name] };
      if (JSON.stringify(Object.entries(labels).sort()) !== JSON.stringify(Object.entries(want).sort())) {
        mismatches.push(`${v.name}: got ${JSON.stringify(labels)} want ${JSON.stringify(want)}`);
      }
      for (const key of AWS_WELL_KNOWN_LABELS as readonly string[]) {
        // NodeClaim-level labels (node class, placement group, zone id) and tenancy are not instance-type facts.
        if (NOT_TYPE_LABELS.has(key) || key in v.labels) continue;
        const r = reqs.get(key);
        if (!r || operatorOf(r) !== 'DoesNotExist') mismatches.push(`${v.name}: ${key} should be DoesNotExist`);
      }
      if (operatorOf(reqs.get(WINDOWS_BUILD_LABEL)!) !== 'DoesNotExist')
        mismatches.push(`${v.name}: windows-build defined on Linux`);
    }
    expect(mismatches).toEqual([]);
  });
});
