// The global repack's evaluation of one candidate set: simulate removing them (with instance types capped at a
// price, for the capped variations), cut the simulation into units and keep the units that save enough and
// that Balanced pools approve. repacksearch.ts decides which sets to evaluate; repack.ts plans steps from the best.
import type { Snapshot } from '../domain/types.ts';
import { toMicros } from '../domain/money.ts';
import type { ModelCaches } from '../model/caches.ts';
import { evaluateBalancedMove, type PoolTotals } from './balanced.ts';
import type { Resolved } from './method.ts';
import { cappedTypes } from './repackcap.ts';
import { groupUnits, priceUnit, type Unit } from './repackunits.ts';
import { podNodes, simulate, type Simulation } from './simulate.ts';
import type { Candidate } from './types.ts';

export interface Evaluation {
  readonly sim: Simulation;
  readonly units: readonly Unit[];
  /** Units that save, but less than the minimum share of their nodes' price (not carried out). */
  readonly small: readonly Unit[];
  readonly savings: number;
  readonly disruption: number;
}

type Outcome = { ok: true; ev: Evaluation } | { ok: false; failed: readonly Candidate[] };

export function priceOf(cs: readonly Candidate[]): number {
  return cs.reduce((a, c) => a + c.price, 0);
}

/** The snapshot with every pool's instance types limited to those whose cheapest available offering is within `cap`. */
function capped(s: Snapshot, cap: number, caches: ModelCaches): Snapshot {
  const lim = toMicros(cap);
  const instanceTypes = new Map([...s.instanceTypes].map(([pool, its]) => [pool, cappedTypes(its, lim, caches)]));
  return { ...s, instanceTypes };
}

export class Search {
  evaluations = 0;
  constructor(
    readonly r: Resolved,
    readonly totals: ReadonlyMap<string, PoolTotals>,
  ) {}

  /** `avoid`: nodes the moved pods may not land on (later steps of the plan remove them). */
  async evaluate(s: Snapshot, cs: readonly Candidate[], cap = Infinity, avoid?: ReadonlySet<string>): Promise<Outcome> {
    this.evaluations++;
    const sim = await simulate(
      cap === Infinity ? s : capped(s, cap, this.r.caches),
      cs.map((c) => c.node),
      this.r.repackSim,
      true,
      avoid,
    );
    if (sim.candidateDeleting)
      return { ok: false, failed: cs.filter((c) => c.node.markedForDeletion || c.node.deleting) };
    if (sim.errors.size) {
      const failed = cs.filter((c) => c.reschedulablePods.some((p) => sim.errors.has(p.uid)));
      return { ok: false, failed };
    }
    const units: Unit[] = [];
    const small: Unit[] = [];
    for (const g of groupUnits(cs, sim, podNodes(s.nodes, this.r.caches))) {
      const u = priceUnit(s, g, this.r.caches);
      if (!u.ok || u.unit.guaranteed <= Math.max(this.r.repackMinSavingsPerHour, 1e-6)) continue;
      const ev = evaluateBalancedMove(u.unit.candidates, u.unit.savings, this.totals, this.r.k);
      if (!ev.approved && ev.perPool.size > 0) continue;
      if (u.unit.guaranteed < this.r.repackMinSavingsShare * priceOf(u.unit.candidates)) small.push(u.unit);
      else units.push(u.unit);
    }
    const savings = units.reduce((a, u) => a + u.savings, 0);
    return { ok: true, ev: { sim, units, small, savings, disruption: units.reduce((a, u) => a + u.disruption, 0) } };
  }

  /** Evaluates, dropping candidates whose pods cannot move (a few rounds). */
  async evaluateMovable(
    s: Snapshot,
    cs: readonly Candidate[],
    cap = Infinity,
    avoid?: ReadonlySet<string>,
  ): Promise<Evaluation | undefined> {
    let set = cs;
    for (let round = 0; round < 3 && set.length; round++) {
      const o = await this.evaluate(s, set, cap, avoid);
      if (o.ok) return o.ev;
      if (!o.failed.length || cap !== Infinity) return undefined;
      const failed = new Set(o.failed);
      set = set.filter((c) => !failed.has(c));
    }
    return undefined;
  }
}
