// Where the change in $/h comes from, in parts that add up exactly to savingsPerHour, and the cost per
// NodePool, zone, capacity type and instance family before and after.
//
// Attribution order (docs/whatif.md "Savings breakdown"): each part is what remains of the change after
// the parts before it are taken out.
//   1. newCapacity: what the nodes launched for pending pods cost (negative).
//   2. emptyNodes: the price of nodes removed with no pod to move (daemonset pods aside).
//   3. reservations: reserved nodes that go are still paid for (negative: cancels their removal).
//   4. capacityType: of the remaining removed nodes R and the replacements A, the change in spot discount:
//      (od(A) - price(A)) - (od(R) - price(R)), od = the type's on-demand price in the region.
//   5. packing: the change in capacity bought, at the removed nodes' on-demand price per unit of capacity:
//      (cap(R) - cap(A)) * od(R) / cap(R). Capacity is vCPU and memory valued at the region's on-demand
//      rates (a least-squares fit of $/h = a*vCPU + b*GiB over general-purpose types).
//   6. instanceType: the rest, cap(A) * (od(R)/cap(R) - od(A)/cap(A)): cheaper (or dearer) per unit of
//      capacity through another family, generation or architecture.
import { roundMicro } from '../domain/money.ts';
import { CPU, MEMORY } from '../domain/resources.ts';
import type { InstanceType } from '../domain/types.ts';
import {
  INSTANCE_CATEGORY_LABEL,
  INSTANCE_FAMILY_LABEL,
  INSTANCE_GENERATION_LABEL,
  INSTANCE_GPU_COUNT_LABEL,
} from '../catalog/labels.ts';
import { anyValue } from '../scheduling/requirements.ts';
import type { CostGroup, NodeRow, SavingsBreakdown } from './types.ts';

/** A node the breakdown prices: a row of the report, or a node launched for pending pods and removed again. */
interface PricedNode {
  readonly name: string;
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: string;
  readonly nodePool?: string;
  readonly pricePerHour: number;
}

interface BreakdownInput {
  readonly rows: readonly NodeRow[];
  /** Nodes launched by the provisioning step (whether they stay or are consolidated away later). */
  readonly launched: readonly PricedNode[];
  /** Of those, the ones consolidation removed again. */
  readonly launchedRemoved: ReadonlySet<string>;
  /** Nodes deleted with no pod to move. */
  readonly empty: ReadonlySet<string>;
  readonly catalog: ReadonlyMap<string, InstanceType>;
  /** The report's savingsPerHour (rounded): the parts add up to it exactly. */
  readonly savingsPerHour: number;
}

const GIB = 1024 ** 3;

/** The instance categories the capacity rates are fitted over. */
const GENERAL_PURPOSE = ['c', 'm', 'r'];

/** The type's value of label k, if its requirements name one. */
function label(it: InstanceType, k: string): string | undefined {
  const r = it.requirements.get(k);
  return r ? anyValue(r) : undefined;
}

/** $/h per vCPU and per GiB that best explain the region's on-demand prices of general-purpose types. */
function capacityRates(catalog: ReadonlyMap<string, InstanceType>): { cpu: number; gib: number } {
  let sxx = 0,
    sxy = 0,
    syy = 0,
    sxp = 0,
    syp = 0;
  for (const it of catalog.values()) {
    if (
      !GENERAL_PURPOSE.includes(label(it, INSTANCE_CATEGORY_LABEL) ?? '') ||
      Number(label(it, INSTANCE_GENERATION_LABEL) ?? 0) < 5
    )
      continue;
    if (Number(label(it, INSTANCE_GPU_COUNT_LABEL) ?? 0) > 0) continue;
    const od = it.offerings.find((o) => o.capacityType === 'on-demand' && o.available);
    if (!od) continue;
    const x = (it.capacity[CPU] ?? 0) / 1000,
      y = (it.capacity[MEMORY] ?? 0) / GIB;
    sxx += x * x;
    sxy += x * y;
    syy += y * y;
    sxp += x * od.price;
    syp += y * od.price;
  }
  const det = sxx * syy - sxy * sxy;
  if (!(det > 0)) return { cpu: 0.04, gib: 0.005 };
  const cpu = (sxp * syy - syp * sxy) / det,
    gib = (syp * sxx - sxp * sxy) / det;
  return cpu > 0 && gib > 0 ? { cpu, gib } : { cpu: 0.04, gib: 0.005 };
}

function onDemandOf(n: PricedNode, catalog: ReadonlyMap<string, InstanceType>): number {
  if (n.capacityType === 'on-demand') return n.pricePerHour;
  const it = n.instanceType ? catalog.get(n.instanceType) : undefined;
  const od = it?.offerings.filter((o) => o.capacityType === 'on-demand' && o.price > 0);
  const inZone = od?.find((o) => o.zone === n.zone) ?? od?.[0];
  return inZone?.price ?? n.pricePerHour;
}

function capacityOf(
  n: PricedNode,
  catalog: ReadonlyMap<string, InstanceType>,
  rates: { cpu: number; gib: number },
  fallback?: NodeRow,
): number {
  const it = n.instanceType ? catalog.get(n.instanceType) : undefined;
  const cpu = it?.capacity[CPU] ?? fallback?.cpu.allocatable ?? 0;
  const mem = it?.capacity[MEMORY] ?? fallback?.memory.allocatable ?? 0;
  return (cpu / 1000) * rates.cpu + (mem / GIB) * rates.gib;
}

const sum = <T>(xs: readonly T[], f: (x: T) => number): number => xs.reduce((a, x) => a + f(x), 0);

/** The six parts of the change (see the header), adding up to Σ before - Σ after. */
function parts(i: BreakdownInput): SavingsBreakdown['perHour'] {
  const removedRows = i.rows.filter((r) => r.fate === 'removed');
  const launchedStaying = new Set(i.launched.filter((l) => !i.launchedRemoved.has(l.name)).map((l) => l.name));
  const replacements = i.rows.filter((r) => r.fate === 'new' && !launchedStaying.has(r.name));
  const removed: PricedNode[] = [...removedRows, ...i.launched.filter((l) => i.launchedRemoved.has(l.name))];
  const newCapacity = -sum(i.launched, (l) => l.pricePerHour);
  const emptyNodes = sum(
    removed.filter((r) => i.empty.has(r.name)),
    (r) => r.pricePerHour,
  );
  const reservations = -sum(
    removed.filter((r) => r.capacityType === 'reserved'),
    (r) => r.pricePerHour,
  );
  const rest = removed.filter((r) => !i.empty.has(r.name));
  const rates = capacityRates(i.catalog);
  const odR = sum(rest, (r) => onDemandOf(r, i.catalog)),
    odA = sum(replacements, (r) => onDemandOf(r, i.catalog));
  const capacityType = odA - sum(replacements, (r) => r.pricePerHour) - (odR - sum(rest, (r) => r.pricePerHour));
  const capR = sum(rest, (r) =>
    capacityOf(
      r,
      i.catalog,
      rates,
      removedRows.find((x) => x.name === r.name),
    ),
  );
  const capA = sum(replacements, (r) => capacityOf(r, i.catalog, rates, r));
  const unitR = capR > 0 ? odR / capR : 0;
  const packing = capR > 0 ? (capR - capA) * unitR : odR - odA;
  const out = {
    newCapacity: roundMicro(newCapacity),
    emptyNodes: roundMicro(emptyNodes),
    reservations: roundMicro(reservations),
    capacityType: roundMicro(capacityType),
    packing: roundMicro(packing),
  };
  // instanceType closes the sum ((odR - odA) - packing = capA * (unitR - unitA)), so rounding never leaves a gap.
  return { ...out, instanceType: roundMicro(i.savingsPerHour - Object.values(out).reduce((a, v) => a + v, 0)) };
}

function familyOf(r: NodeRow, catalog: ReadonlyMap<string, InstanceType>): string {
  const it = r.instanceType ? catalog.get(r.instanceType) : undefined;
  const f = it?.requirements.get(INSTANCE_FAMILY_LABEL);
  return (f && anyValue(f)) ?? r.instanceType?.split('.')[0] ?? 'unknown';
}

/** Nodes and $/h per key before (kept + removed) and after (kept + new), sorted by cost before, then after. */
function groupBy(rows: readonly NodeRow[], key: (r: NodeRow) => string): CostGroup[] {
  const m = new Map<
    string,
    { nodesBefore: number; nodesAfter: number; costPerHourBefore: number; costPerHourAfter: number }
  >();
  for (const r of rows) {
    const k = key(r);
    const g = m.get(k) ?? { nodesBefore: 0, nodesAfter: 0, costPerHourBefore: 0, costPerHourAfter: 0 };
    if (r.fate !== 'new') {
      g.nodesBefore++;
      g.costPerHourBefore += r.pricePerHour;
    }
    if (r.fate !== 'removed') {
      g.nodesAfter++;
      g.costPerHourAfter += r.pricePerHour;
    }
    m.set(k, g);
  }
  return [...m]
    .map(([k, g]) => ({
      key: k,
      ...g,
      costPerHourBefore: roundMicro(g.costPerHourBefore),
      costPerHourAfter: roundMicro(g.costPerHourAfter),
    }))
    .sort(
      (a, b) =>
        b.costPerHourBefore - a.costPerHourBefore ||
        b.costPerHourAfter - a.costPerHourAfter ||
        a.key.localeCompare(b.key),
    );
}

const BREAKDOWN_ORDER = [
  'newCapacity',
  'emptyNodes',
  'reservations',
  'capacityType',
  'packing',
  'instanceType',
] as const;

export function savingsBreakdown(i: BreakdownInput): SavingsBreakdown {
  const perHour = parts(i);
  return {
    order: BREAKDOWN_ORDER,
    perHour,
    byNodePool: groupBy(i.rows, (r) => r.nodePool ?? (r.managed ? 'unknown' : '(not managed)')),
    byZone: groupBy(i.rows, (r) => r.zone ?? 'unknown'),
    byCapacityType: groupBy(i.rows, (r) => r.capacityType ?? 'unknown'),
    byFamily: groupBy(i.rows, (r) => familyOf(r, i.catalog)),
  };
}
