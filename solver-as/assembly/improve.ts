// The improvement phase: after Karpenter's algorithm has placed every pod it can, re-pack the pods of new
// NodeClaims whose placement nothing else depends on, choosing node shapes by price, and keep the result only if
// it is strictly cheaper (or as cheap with fewer nodes), or if it also places pods Karpenter's plan left pending at
// the limits (improve). It never leaves a pod unplaced that Karpenter's plan places. docs/solver.md describes what
// it may change and what it never changes.
//
// Karpenter packs greedily into ever-larger NodeClaims and only then picks the cheapest type that holds each one,
// so its plans follow the pods' arrival order, not the prices. The steps:
//
// 1. candidates: NodeClaims holding only "free" pods (no topology group constrains or counts them, no host
//    ports, no volume alternatives), of NodePools without reserved offerings or minValues;
// 2. homes: each of their pods goes to the first NodePool in Karpenter's order whose fresh NodeClaim could take
//    it within its limits (order.ts), so re-packing keeps the NodePools' weights;
// 3. per NodePool and requirement group, pack the pods two ways and keep the cheaper (pack.ts), costing each
//    node at what its launch would pay (bins.ts); fit the NodePool's limits as Karpenter counts them (quota.ts);
// 4. keep the result if it is cheaper (or places pods Karpenter's plan left pending) and every NodeClaim left as Karpenter planned it still holds a pod no
//    earlier NodePool could take (the order holds for the whole plan), then commit it.
import { E_RESERVED, FLAG_CONSOLIDATION, PLACED_CLAIM_BASE, PLACED_NOWHERE, P_MOVED, P_VERSION, T_SET, V_INV_SELECT, V_OWNED, V_PORTS, V_RECORD, V_REQS, V_REQUESTS, V_VOLUMES } from '../abi';
import { FLAGS, LIMIT_DIMS, PODS, RESOURCES, TEMPLATES, f64At, listLen, pod, tmpl, ver } from './layout';
import { compatFor } from './its';
import { Bin, Classes, Types } from './bins';
import { packGroup } from './pack';
import { errors, limitsOf, placedVersion, placement } from './schedule';
import { MODE_WELL_KNOWN, canonicalInput, mergeCompatible, setHasMinValues } from './sets';
import { templateReserved } from './reservations';
import { Claim, claimAt, claimCount, pushClaim, templateLen, templateStart } from './state';
import { late, markFor, restartWork } from './budget';
import { anchors, canTake, capWithin, homeOf } from './order';
import { fillLimits } from './limitfill';
import { Fresh, PENALTY_STEPS, capOf, namedUse, narrow, setPenalty, within } from './quota';

function isFree(v: i32): bool {
  return listLen(ver(v, V_OWNED)) == 0 && listLen(ver(v, V_INV_SELECT)) == 0 && listLen(ver(v, V_RECORD)) == 0
    && listLen(ver(v, V_PORTS)) == 0 && listLen(ver(v, V_VOLUMES)) == 0;
}

/**
 * The types a claim's launch may pick from (the claims with the same set share them), memoised per (set, template).
 * The plan names every claim of a solve with this phase as its launch would pick (engine/abi/decode.ts), Karpenter's
 * too.
 */
function typesOf(c: Claim, memo: Map<u64, Types>): Types {
  const key = (<u64>c.set << 16) | <u64>c.tmpl;
  if (memo.has(key)) return memo.get(key);
  const compat = compatFor(c.set, c.tmpl);
  const local = new Array<i32>();
  for (let j = 0; j < templateLen(c.tmpl); j++) if (unchecked(compat.ok[j]) != 0) local.push(j);
  const ts = new Types(c.tmpl, local, c.set, compat.price);
  memo.set(key, ts);
  return ts;
}

/** What a claim's launch would pay (micros; Infinity if no type holds it). */
function claimPrice(c: Claim, memo: Map<u64, Types>): f64 {
  return typesOf(c, memo).cost(c.total);
}

/** Templates the phase leaves as Karpenter planned them: reserved offerings (a re-packed claim would hold none yet
 * could launch into one), or minValues (which the packers do not count). */
function excludedTemplates(): Uint8Array {
  const out = new Uint8Array(TEMPLATES);
  for (let t = 0; t < TEMPLATES; t++) {
    if (templateReserved(t) || setHasMinValues(canonicalInput(tmpl(t, T_SET)))) unchecked((out[t] = 1));
  }
  return out;
}

/** Step 1: the claims the phase may replace, their pods, and each pod's version. */
class Candidates {
  isCand: Uint8Array;
  claims: Array<i32> = new Array<i32>();
  pods: Array<i32> = new Array<i32>();
  vers: Array<i32> = new Array<i32>();
  /** How many of `pods` (the last ones) Karpenter's plan left unplaced (extrasOf). */
  extras: i32 = 0;
  constructor(readonly nClaims: i32, readonly excluded: Uint8Array) {
    this.isCand = new Uint8Array(nClaims);
    const allFree = new Uint8Array(nClaims);
    allFree.fill(1);
    const hasPods = new Uint8Array(nClaims);
    for (let p = 0; p < PODS; p++) {
      const at = unchecked(placement[p]);
      if (at > PLACED_CLAIM_BASE) continue;
      const c = PLACED_CLAIM_BASE - at;
      unchecked((hasPods[c] = 1));
      if (!isFree(unchecked(placedVersion[p]))) unchecked((allFree[c] = 0));
    }
    for (let c = 0; c < nClaims; c++) {
      if (unchecked(hasPods[c]) == 0 || unchecked(allFree[c]) == 0 || unchecked(excluded[claimAt(c).tmpl]) != 0) continue;
      unchecked((this.isCand[c] = 1));
      this.claims.push(c);
    }
    for (let p = 0; p < PODS; p++) {
      const at = unchecked(placement[p]);
      if (at <= PLACED_CLAIM_BASE && unchecked(this.isCand[PLACED_CLAIM_BASE - at]) != 0) {
        this.pods.push(p);
        this.vers.push(unchecked(placedVersion[p]));
      }
    }
  }

  /**
   * Adds the first `n` of `extra` (extrasOf) whose home, with the room the candidates give back, is a template the
   * phase may pack into.
   */
  addExtras(extra: Array<i32>, n: i32, rooms: Array<Float64Array>): void {
    for (let i = 0; i < extra.length && this.extras < n; i++) {
      const p = unchecked(extra[i]);
      const v = pod(p, P_VERSION);
      const h = homeOf(v, rooms);
      if (h < 0 || unchecked(this.excluded[h]) != 0) continue;
      this.pods.push(p);
      this.vers.push(v);
      this.extras++;
    }
  }
}

/**
 * The pending pods (extrasOf) worth trying: those that a fresh NodeClaim of their home could take in the room its
 * limits would have if each of Karpenter's NodeClaims there took only what the type its launch picks takes, instead
 * of its largest option. Where Karpenter's NodeClaims launch as their largest options (pods filling them), that room
 * is what Karpenter's plan left, no pending pod fits it, and the phase does not try.
 */
function hopefulExtras(cand: Candidates, rooms: Array<Float64Array>): Array<i32> {
  const out = new Array<i32>();
  const extra = extrasOf();
  if (extra.length == 0) return out;
  const narrow = narrowRooms(cand);
  for (let i = 0; i < extra.length; i++) {
    const p = unchecked(extra[i]);
    const v = pod(p, P_VERSION);
    const h = homeOf(v, rooms);
    if (h >= 0 && unchecked(cand.excluded[h]) == 0 && canTake(h, v, unchecked(narrow[h]))) out.push(p);
  }
  return out;
}

/** Per template: its remaining limits plus what each candidate claim takes beyond the type its launch picks. */
function narrowRooms(cand: Candidates): Array<Float64Array> {
  const out = new Array<Float64Array>();
  for (let t = 0; t < TEMPLATES; t++) out.push(limitsOf(t).slice());
  const memo = new Map<u64, Types>();
  for (let i = 0; i < cand.claims.length; i++) {
    const c = claimAt(unchecked(cand.claims[i]));
    const ts = typesOf(c, memo);
    const x = ts.pick(c.total);
    if (x < 0) continue;
    const r = unchecked(out[c.tmpl]);
    for (let d = 0; d < LIMIT_DIMS; d++) unchecked((r[d + 1] += max(0, unchecked(c.reserved[d + 1]) - capOf(ts, x, d))));
  }
  return out;
}

/**
 * Pods Karpenter's plan left unplaced that the phase may place, in queue order: free in their first form (all their
 * preferences kept), not moving off a node, not waiting for reserved capacity. Only in provisioning: a disruption
 * simulation keeps Karpenter's verdict on its pending pods (they decide nothing there, and new NodeClaims for them
 * would change what a consolidation needs).
 */
function extrasOf(): Array<i32> {
  const out = new Array<i32>();
  if ((FLAGS & FLAG_CONSOLIDATION) != 0) return out;
  for (let p = 0; p < PODS; p++) {
    if (unchecked(placement[p]) != PLACED_NOWHERE || unchecked(errors[p]) == E_RESERVED) continue;
    if (pod(p, P_MOVED) != 0 || !isFree(pod(p, P_VERSION))) continue;
    out.push(p);
  }
  return out;
}

/** Per template: its remaining limits plus what the candidate claims took from them (given back if replaced). */
function roomsOf(cand: Candidates): Array<Float64Array> {
  const rooms = new Array<Float64Array>();
  for (let t = 0; t < TEMPLATES; t++) rooms.push(limitsOf(t).slice());
  for (let i = 0; i < cand.claims.length; i++) {
    const c = claimAt(unchecked(cand.claims[i]));
    const r = unchecked(rooms[c.tmpl]);
    for (let d = 0; d < c.reserved.length; d++) unchecked((r[d] += unchecked(c.reserved[d])));
  }
  return rooms;
}

/** Step 2: each candidate pod's home template; null when one has none, or one the phase may not pack into. */
function homesOf(cand: Candidates, rooms: Array<Float64Array>, excluded: Uint8Array): Int32Array | null {
  const homes = new Int32Array(cand.pods.length);
  const byVersion = new Map<i32, i32>();
  for (let i = 0; i < cand.pods.length; i++) {
    const v = unchecked(cand.vers[i]);
    let h: i32;
    if (byVersion.has(v)) h = byVersion.get(v);
    else {
      h = homeOf(v, rooms);
      byVersion.set(v, h);
    }
    if (h < 0 || unchecked(excluded[h]) != 0) return null;
    unchecked((homes[i] = h));
  }
  return homes;
}

/** One requirement group of a template: its merged set, its types within the template's room, its pods. */
class Group {
  constructor(readonly set: i32, readonly ts: Types, readonly cl: Classes) {}
}

/** The groups of the pods whose home is t (by their requirement sets); null when one cannot be packed. */
function groupsOf(t: i32, cand: Candidates, homes: Int32Array, room: Float64Array): Array<Group> | null {
  const classes = new Array<Classes>();
  const reqs = new Array<i32>();
  for (let i = 0; i < cand.pods.length; i++) {
    if (unchecked(homes[i]) != t) continue;
    const p = unchecked(cand.pods[i]);
    const v = unchecked(cand.vers[i]);
    const rq = canonicalInput(ver(v, V_REQS));
    let g = -1;
    for (let k = 0; k < reqs.length; k++) if (unchecked(reqs[k]) == rq) g = k;
    if (g < 0) {
      g = classes.length;
      classes.push(new Classes());
      reqs.push(rq);
    }
    unchecked(classes[g]).add(v, p);
  }
  const out = new Array<Group>();
  const tset = canonicalInput(tmpl(t, T_SET));
  const start = templateStart(t);
  for (let g = 0; g < classes.length; g++) {
    const gset = mergeCompatible(tset, unchecked(reqs[g]), MODE_WELL_KNOWN);
    if (gset < 0 || setHasMinValues(gset)) return null;
    const compat = compatFor(gset, t);
    const local = new Array<i32>();
    for (let j = 0; j < templateLen(t); j++) if (unchecked(compat.ok[j]) != 0 && capWithin(start + j, room)) local.push(j);
    if (local.length == 0) return null;
    out.push(new Group(gset, new Types(t, local, gset, compat.price), unchecked(classes[g])));
  }
  return out;
}

function podCount(cl: Classes): i32 {
  let n = 0;
  for (let c = 0; c < cl.counts.length; c++) n += unchecked(cl.counts[c]);
  return n;
}

/** The nodes of one group's bins: each with its pods, request total and launch pick. */
function freshOf(g: Group, bins: Array<Bin>, out: Array<Fresh>): bool {
  const cl = g.cl;
  const cursor = new Int32Array(cl.versions.length);
  for (let b = 0; b < bins.length; b++) {
    const take = unchecked(bins[b]).take;
    const total = new Float64Array(RESOURCES);
    const pods = new Array<i32>();
    for (let c = 0; c < cl.versions.length; c++) {
      const k = unchecked(take[c]);
      if (k == 0) continue;
      const rq = ver(unchecked(cl.versions[c]), V_REQUESTS);
      for (let r = 0; r < RESOURCES; r++) unchecked((total[r] += <f64>k * f64At(rq + r)));
      const src = unchecked(cl.pods[c]);
      for (let q = 0; q < k; q++) pods.push(unchecked(src[unchecked(cursor[c]) + q]));
      unchecked((cursor[c] += k));
    }
    const x = g.ts.pick(total);
    if (x < 0) return false;
    out.push(new Fresh(g.set, g.ts, total, pods, x, g.ts.picked));
  }
  return true;
}

/** Packs every group of a template with the types' current penalties; null when a group cannot be packed. */
function packAll(groups: Array<Group>, state: Budgeting): Array<Fresh> | null {
  const fresh = new Array<Fresh>();
  for (let i = 0; i < groups.length; i++) {
    const g = unchecked(groups[i]);
    const bins = packGroup(g.ts, g.cl, state.markFor(podCount(g.cl)));
    if (bins == null || !freshOf(g, bins, fresh)) return null;
  }
  return fresh;
}

/**
 * The budget shared out by pods (budget.ts): each packing may use its pods' share of what is left, times `scale`
 * (below 1 while a template may still have to be packed again within its limits).
 */
class Budgeting {
  scale: f64 = FIRST_PASS;
  constructor(public podsLeft: i32) {}
  markFor(pods: i32): f64 {
    const m = markFor(this.scale * <f64>pods / <f64>max(1, this.podsLeft));
    this.podsLeft = max(0, this.podsLeft - pods);
    return m;
  }
}

/** What share of its allowance a template's first packing may use, when its limits may make it pack again. */
const FIRST_PASS: f64 = 0.5;

function costOf(fresh: Array<Fresh>): f64 {
  let s: f64 = 0;
  for (let i = 0; i < fresh.length; i++) s += unchecked(fresh[i]).price;
  return s;
}

/**
 * Step 3 for template t: pack its groups; if the nodes do not fit the room its limits leave, pack again with a
 * rising price on room (quota.ts) until they do. Null when they never fit.
 */
function planTemplate(groups: Array<Group>, room: Float64Array, state: Budgeting): Array<Fresh> | null {
  // Only a template with limits may need packing again: the others may use their whole allowance at once.
  state.scale = hasLimits(room) ? FIRST_PASS : 1;
  let fresh = packAll(groups, state);
  if (fresh == null) return null;
  if (!within(namedUse(fresh), room)) {
    const scale = costOf(fresh);
    let fitted: Array<Fresh> | null = null;
    for (let k = 0; k < PENALTY_STEPS.length && fitted == null; k++) {
      for (let i = 0; i < groups.length; i++) setPenalty(unchecked(groups[i]).ts, room, unchecked(PENALTY_STEPS[k]), scale);
      // The steps share what the first packing left: each its part of the steps still to come.
      state.podsLeft += podsOf(groups);
      state.scale = 1 / <f64>(PENALTY_STEPS.length - k);
      const f = packAll(groups, state);
      if (f != null && within(namedUse(f), room)) fitted = f;
    }
    if (fitted == null) return null;
    fresh = fitted;
  }
  narrow(fresh, room);
  return fresh;
}

function hasLimits(room: Float64Array): bool {
  for (let d = 0; d < room.length; d++) if (unchecked(room[d]) < Infinity) return true;
  return false;
}

function podsOf(groups: Array<Group>): i32 {
  let n = 0;
  for (let i = 0; i < groups.length; i++) n += podCount(unchecked(groups[i]).cl);
  return n;
}

/**
 * Step 4's check: every NodeClaim the phase keeps as Karpenter planned it still holds a pod that no earlier
 * template could take with the room it has after the phase (re-packing can leave a NodePool more room than
 * Karpenter's plan did).
 */
function keptStillAnchored(cand: Candidates, finals: Array<Float64Array>): bool {
  const n = cand.nClaims;
  const anchored = new Uint8Array(n);
  for (let p = 0; p < PODS; p++) {
    const at = unchecked(placement[p]);
    if (at > PLACED_CLAIM_BASE) continue;
    const c = PLACED_CLAIM_BASE - at;
    if (unchecked(cand.isCand[c]) != 0 || unchecked(anchored[c]) != 0) continue;
    const v = unchecked(placedVersion[p]);
    if (!isFree(v) || anchors(v, claimAt(c).tmpl, finals)) unchecked((anchored[c] = 1));
  }
  for (let c = 0; c < n; c++) {
    if (unchecked(cand.isCand[c]) != 0 || claimAt(c).pods == 0) continue;
    if (unchecked(anchored[c]) == 0) return false;
  }
  return true;
}

/** Retires the candidate claims and adds the new ones; returns the number of templates that changed. */
function commit(cand: Candidates, plans: Array<Array<Fresh> | null>, finals: Array<Float64Array>): i32 {
  for (let i = 0; i < cand.claims.length; i++) {
    const c = claimAt(unchecked(cand.claims[i]));
    c.pods = 0;
    c.liveLen = 0;
  }
  let changed = 0;
  for (let t = 0; t < TEMPLATES; t++) {
    const fresh = unchecked(plans[t]);
    const lim = limitsOf(t);
    for (let d = 0; d <= LIMIT_DIMS; d++) unchecked((lim[d] = unchecked(unchecked(finals[t])[d])));
    if (fresh == null) continue;
    changed++;
    for (let i = 0; i < fresh.length; i++) {
      const f = unchecked(fresh[i]);
      const cl = new Claim(t, f.set, f.live, f.live.length, claimCount(), 0);
      for (let r = 0; r < RESOURCES; r++) unchecked((cl.total[r] = unchecked(f.total[r])));
      cl.pods = f.pods.length;
      cl.reserved = f.reserved;
      const ci = pushClaim(cl);
      for (let q = 0; q < f.pods.length; q++) unchecked((placement[unchecked(f.pods[q])] = PLACED_CLAIM_BASE - ci));
    }
  }
  // Pods Karpenter's plan left unplaced: placed in their first form.
  for (let i = cand.pods.length - cand.extras; i < cand.pods.length; i++) {
    const p = unchecked(cand.pods[i]);
    unchecked((placedVersion[p] = unchecked(cand.vers[i])));
    unchecked((errors[p] = 0));
  }
  return changed;
}

/** Plan.failed when every template was planned. */
const PLAN_OK: i32 = -1;
/** Plan.failed when the phase must stop (a group it cannot plan, or the time is up). */
const PLAN_STOP: i32 = -2;

/** A plan of every template: the new claims per template (null: none), the room each has left, and the totals. */
class Plan {
  plans: Array<Array<Fresh> | null> = new Array<Array<Fresh> | null>();
  finals: Array<Float64Array> = new Array<Float64Array>();
  cost: f64 = 0;
  count: i32 = 0;
  /** The template whose pods its limits could not hold, or PLAN_OK, or PLAN_STOP when the phase must stop. */
  failed: i32 = PLAN_OK;
}

/** Step 3 for every template in order; stops at the first that cannot be planned. */
function planAll(cand: Candidates, rooms: Array<Float64Array>, homes: Int32Array, state: Budgeting): Plan {
  const out = new Plan();
  for (let t = 0; t < TEMPLATES; t++) {
    const room = unchecked(rooms[t]);
    const groups = groupsOf(t, cand, homes, room);
    if (groups == null || late()) {
      out.failed = PLAN_STOP;
      return out;
    }
    let fresh: Array<Fresh> | null = null;
    if (groups.length > 0) {
      fresh = planTemplate(groups, room, state);
      if (fresh == null) {
        out.failed = t;
        return out;
      }
    }
    out.plans.push(fresh);
    const fin = room.slice();
    if (fresh != null) {
      for (let i = 0; i < fresh.length; i++) {
        const f = unchecked(fresh[i]);
        for (let d = 0; d <= LIMIT_DIMS; d++) unchecked((fin[d] -= unchecked(f.reserved[d])));
        out.cost += f.price;
      }
      out.count += fresh.length;
    }
    out.finals.push(fin);
  }
  return out;
}

/**
 * Re-packs free pods; returns the number of templates whose NodeClaims were replaced (0: Karpenter's plan kept).
 * First with pods Karpenter's plan left pending (hopefulExtras): Karpenter counts each NodeClaim at its largest
 * option, so its wide NodeClaims can use up limits that narrow ones leave room in; if the pods tried all find a
 * place, the plan places them (Karpenter would, on its next pass once its NodeClaims launch). Else, with a fresh work
 * budget, the pods Karpenter placed only.
 */
export function improve(): i32 {
  const nClaims = claimCount();
  if (nClaims == 0) return 0;
  limitBound = new Uint8Array(TEMPLATES);
  const first = new Candidates(nClaims, excludedTemplates());
  const extra = hopefulExtras(first, roomsOf(first));
  // All of them, then the first half, then the first quarter (queue order), each with the whole work budget.
  for (let k = 0, n = extra.length; k < EXTRA_TRIES && n > 0; k++, n >>= 1) {
    const changed = improveWith(nClaims, extra, n);
    if (changed > 0) return changed + filled();
    restartWork();
  }
  restartWork();
  return improveWith(nClaims, extra, 0) + filled();
}

/**
 * Templates whose limits could not hold the pods whose home they are, in the last pass (improveWith): they keep
 * Karpenter's NodeClaims, which the exact fill (limitfill.ts) then improves.
 */
let limitBound: Uint8Array = new Uint8Array(0);

/** The exact fill over the bound templates' claims, with a fresh work budget; the templates it changed. */
function filled(): i32 {
  let any = false;
  for (let t = 0; t < limitBound.length; t++) if (unchecked(limitBound[t]) != 0) any = true;
  if (!any || late()) return 0;
  restartWork();
  return fillLimits(limitBound, new Candidates(claimCount(), excludedTemplates()).isCand);
}

/** How many times the phase tries to place pending pods (all, half, a quarter) before it plans without them. */
const EXTRA_TRIES = 3;

/**
 * One pass of the phase. A template whose limits cannot hold every pod whose home it is (Karpenter's plan overflowed
 * it into a later NodePool) keeps Karpenter's NodeClaims, and the phase starts again with it left out: its room is
 * then what Karpenter's plan left it, so the pods it could not take find their home further down, as in Karpenter's
 * order. With n > 0, the first n of `extra` that have a home are added, and the plan is kept only if it places them,
 * whatever it costs; with none, only if it is cheaper (or as cheap with fewer nodes).
 */
function improveWith(nClaims: i32, extra: Array<i32>, n: i32): i32 {
  const extras = n > 0;
  const excluded = excludedTemplates();
  limitBound.fill(0);
  for (let attempt = 0; attempt <= TEMPLATES; attempt++) {
    const cand = new Candidates(nClaims, excluded);
    const rooms = roomsOf(cand);
    if (extras) cand.addExtras(extra, n, rooms);
    if (cand.pods.length == 0 || (extras && cand.extras == 0)) return 0;
    const homes = homesOf(cand, rooms, excluded);
    if (homes == null) return 0;
    const plan = planAll(cand, rooms, homes, new Budgeting(cand.pods.length));
    if (plan.failed == PLAN_STOP) return 0;
    if (plan.failed >= 0) {
      unchecked((excluded[plan.failed] = 1));
      if (hasLimits(unchecked(rooms[plan.failed]))) unchecked((limitBound[plan.failed] = 1));
      continue;
    }
    if (!extras && !cheaper(cand, plan)) return 0;
    if (!keptStillAnchored(cand, plan.finals)) return 0;
    return commit(cand, plan.plans, plan.finals);
  }
  return 0;
}

/** The plan costs less than the candidates (or as much with fewer nodes). */
function cheaper(cand: Candidates, plan: Plan): bool {
  let oldCost: f64 = 0;
  const memo = new Map<u64, Types>();
  for (let i = 0; i < cand.claims.length; i++) oldCost += claimPrice(claimAt(unchecked(cand.claims[i])), memo);
  return plan.cost < oldCost - 0.5 || (Math.abs(plan.cost - oldCost) <= 0.5 && plan.count < cand.claims.length);
}
