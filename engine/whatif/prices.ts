// What a node costs and what it is: the catalog's price for its instance type, zone and capacity type (as
// Karpenter prices a candidate: the matching offering whatever its availability), and, for a NodeClaim the
// plan would launch, the type, zone and capacity type it would most likely get (its cheapest option's
// cheapest compatible available offering).
import type { CapacityType, InstanceType, Labels, Offering, StateNode } from '../domain/types.ts';
import { CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { fromSelectorRequirements, has, get } from '../scheduling/requirements.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';

/** EKS managed node groups write their capacity type here (ON_DEMAND / SPOT). */
const EKS_CAPACITY_LABEL = 'eks.amazonaws.com/capacityType';

export interface NodePrice {
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: CapacityType;
  readonly price: number;
  readonly known: boolean;
  /** Why the price is unknown or assumed, for the report's warnings. */
  readonly note?: string;
}

export function capacityTypeOf(labels: Labels): CapacityType | undefined {
  const k = labels[CAPACITY_TYPE_LABEL];
  if (k === 'spot' || k === 'on-demand' || k === 'reserved') return k;
  const eks = labels[EKS_CAPACITY_LABEL];
  if (eks === 'SPOT') return 'spot';
  if (eks === 'ON_DEMAND') return 'on-demand';
  return undefined;
}

/** The price of an existing node from the region's catalog (types by name). */
export function nodePrice(node: StateNode, catalog: ReadonlyMap<string, InstanceType>): NodePrice {
  const instanceType = node.labels[INSTANCE_TYPE_LABEL];
  const zone = node.labels[ZONE_LABEL];
  const labelled = capacityTypeOf(node.labels);
  const capacityType = labelled ?? 'on-demand';
  const base = { ...(instanceType ? { instanceType } : {}), ...(zone ? { zone } : {}), capacityType };
  if (!instanceType) return { ...base, price: 0, known: false, note: `node ${node.name} has no ${INSTANCE_TYPE_LABEL} label; counted at $0/h` };
  const it = catalog.get(instanceType);
  if (!it) return { ...base, price: 0, known: false, note: `node ${node.name}: instance type ${instanceType} is not in the catalog; counted at $0/h` };
  const offerings = it.offerings.filter((o) => o.capacityType === capacityType && (zone === undefined || o.zone === zone));
  const priced = offerings.find((o) => o.available) ?? offerings[0];
  if (!priced || !(priced.price > 0)) return { ...base, price: 0, known: false, note: `node ${node.name}: no ${capacityType} price for ${instanceType}; counted at $0/h` };
  return { ...base, price: priced.price, known: true, ...(labelled ? {} : { note: `node ${node.name} has no capacity-type label; priced as on-demand` }) };
}

export interface LaunchGuess {
  readonly instanceType?: InstanceType;
  readonly offering?: Offering;
}

/** The first (cheapest) option of a planned NodeClaim and the offering it would launch with. */
export function launchOf(plan: NewNodeClaimPlan, types: readonly InstanceType[]): LaunchGuess {
  const first = plan.instanceTypes[0];
  const it = first ? types.find((t) => t.name === first.name) : undefined;
  if (!it) return {};
  const reqs = fromSelectorRequirements(plan.requirements);
  const zoneReq = get(reqs, ZONE_LABEL);
  const ctReq = get(reqs, CAPACITY_TYPE_LABEL);
  let best: Offering | undefined;
  for (const o of it.offerings) {
    if (!o.available || !has(zoneReq, o.zone) || !has(ctReq, o.capacityType)) continue;
    if (!best || o.price < best.price) best = o;
  }
  return { instanceType: it, ...(best ? { offering: best } : {}) };
}
