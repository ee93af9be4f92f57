// The improvement phase: after Karpenter's algorithm has placed every pod it can, re-pack the pods of new
// NodeClaims whose placement nothing else depends on, choosing node shapes by price, and keep the result
// only if it is strictly cheaper (or as cheap with fewer nodes). It never changes which pods are placed.
//
// Karpenter packs greedily into ever-larger NodeClaims and only then picks the cheapest type that holds
// each one, so its plans follow the pods' arrival order, not the prices. Here, per NodePool template and
// requirement group, pack the group's pods two ways and keep the cheaper (pack.ts): greedily by a price per
// unit of each resource from the covering LP (lp.ts), and by node patterns from column generation, which
// prices each pod class by the nodes it shares and so mixes cpu-heavy and memory-heavy pods (patterns.ts).
//
// "Free" pods are those no topology group constrains or counts, with no host ports and no volume
// alternatives: moving them between new NodeClaims cannot break any constraint but their own requirements,
// which are checked again (each group keeps its own requirement set). Pools with minValues are left alone.
import {
  DG_OVERHEAD, IT_ALLOC, IT_DG, T_SET, V_INV_SELECT, V_OWNED, V_PORTS, V_RECORD, V_REQS, V_REQUESTS, V_VOLUMES,
} from '../abi';
import { NLD, NP, NR, NT, dg, f64At, it, listLen, tmpl, ver } from './layout';
import { Compat, compatFor } from './its';
import { Classes, Types } from './bins';
import { packGroup } from './pack';
import { fullFilter, limitsOf, maxCapacity, placedVersion, placement } from './schedule';
import { MODE_WELL_KNOWN, canonicalInput, mergeCompatible, setHasMinValues } from './sets';
import { templateReserved } from './reservations';
import { Claim, claimAt, claimCount, pushClaim, templateLen, templateStart } from './state';

import { late, markFor } from './budget';

function isFree(v: i32): bool {
  return listLen(ver(v, V_OWNED)) == 0 && listLen(ver(v, V_INV_SELECT)) == 0 && listLen(ver(v, V_RECORD)) == 0
    && listLen(ver(v, V_PORTS)) == 0 && listLen(ver(v, V_VOLUMES)) == 0;
}

/** Cheapest allowed price (micros) among the claim's instance types that hold its pods; Infinity if none. */
function claimPrice(c: Claim): f64 {
  fullFilter(c);
  const compat = compatFor(c.set, c.tmpl);
  let best = Infinity;
  for (let x = 0; x < c.liveLen; x++) best = min(best, unchecked(compat.price[unchecked(c.live[x])]));
  return best;
}

/** Re-packs free pods per template; returns the number of templates whose NodeClaims were replaced. */
export function improve(): i32 {
  const nClaims = claimCount();
  if (nClaims == 0) return 0;
  // Which claims hold only free pods.
  const allFree = new Uint8Array(nClaims);
  allFree.fill(1);
  const hasPods = new Uint8Array(nClaims);
  for (let p = 0; p < NP; p++) {
    const at = unchecked(placement[p]);
    if (at > -2) continue;
    const c = -(at + 2);
    unchecked((hasPods[c] = 1));
    if (!isFree(unchecked(placedVersion[p]))) unchecked((allFree[c] = 0));
  }
  // The budget is shared out by pods: each group may use its pods' share of what is left (budget.ts).
  let podsLeft = 0;
  for (let p = 0; p < NP; p++) {
    const at = unchecked(placement[p]);
    if (at <= -2 && unchecked(allFree[-(at + 2)]) != 0) podsLeft++;
  }
  let changed = 0;
  for (let t = 0; t < NT; t++) {
    if (late()) break;
    // Pools with reserved offerings are left as Karpenter planned them: re-packed claims would hold no
    // reservations yet could launch into one (docs/solver.md).
    if (templateReserved(t)) continue;
    // Candidate claims of this template and the groups of their pods.
    let oldCost: f64 = 0;
    let oldCount = 0;
    const oldClaims = new Array<i32>();
    for (let c = 0; c < nClaims; c++) {
      const cl = claimAt(c);
      if (cl.tmpl != t || unchecked(hasPods[c]) == 0 || unchecked(allFree[c]) == 0) continue;
      oldClaims.push(c);
      oldCost += claimPrice(cl);
      oldCount++;
    }
    if (oldCount == 0) continue;
    const groups = new Array<Classes>();
    const groupReqs = new Array<i32>();
    const isOld = new Uint8Array(nClaims);
    for (let i = 0; i < oldClaims.length; i++) unchecked((isOld[unchecked(oldClaims[i])] = 1));
    for (let p = 0; p < NP; p++) {
      const at = unchecked(placement[p]);
      if (at > -2 || unchecked(isOld[-(at + 2)]) == 0) continue;
      const v = unchecked(placedVersion[p]);
      const rq = canonicalInput(ver(v, V_REQS));
      let g: Classes | null = null;
      for (let i = 0; i < groups.length; i++) if (unchecked(groupReqs[i]) == rq) g = unchecked(groups[i]);
      if (g == null) {
        g = new Classes();
        groups.push(g);
        groupReqs.push(rq);
      }
      g.add(v, p);
    }
    // Pack each group; build the new claims without committing them yet.
    const fresh = new Array<Claim>();
    const freshPods = new Array<Array<i32>>();
    let newCost: f64 = 0;
    let ok = true;
    const tset = canonicalInput(tmpl(t, T_SET));
    for (let gi = 0; gi < groups.length && ok; gi++) {
      const g = unchecked(groups[gi]);
      const gset = mergeCompatible(tset, unchecked(groupReqs[gi]), MODE_WELL_KNOWN);
      if (gset < 0 || setHasMinValues(gset)) { ok = false; break; }
      const compat = compatFor(gset, t);
      const local = new Array<i32>();
      for (let j = 0; j < templateLen(t); j++) if (unchecked(compat.ok[j]) != 0) local.push(j);
      if (local.length == 0) { ok = false; break; }
      let groupPods = 0;
      for (let c = 0; c < g.counts.length; c++) groupPods += unchecked(g.counts[c]);
      const mark = markFor(<f64>groupPods / <f64>max(1, podsLeft));
      podsLeft -= groupPods;
      const bins = packGroup(new Types(t, local, compat.price), g, mark);
      if (bins == null) { ok = false; break; }
      const cursor = new Int32Array(g.versions.length);
      for (let b = 0; b < bins.length; b++) {
        const bin = unchecked(bins[b]);
        const n = templateLen(t);
        const live = new Int32Array(n);
        let ln = 0;
        for (let j = 0; j < n; j++) if (unchecked(compat.ok[j]) != 0) unchecked((live[ln++] = j));
        const cl = new Claim(t, gset, live, ln, nClaims + fresh.length, 0);
        const pods = new Array<i32>();
        for (let c = 0; c < g.versions.length; c++) {
          const k = unchecked(bin.take[c]);
          if (k == 0) continue;
          const rq = ver(unchecked(g.versions[c]), V_REQUESTS);
          for (let r = 0; r < NR; r++) unchecked((cl.total[r] += <f64>k * f64At(rq + r)));
          const src = unchecked(g.pods[c]);
          for (let q = 0; q < k; q++) pods.push(unchecked(src[unchecked(cursor[c]) + q]));
          unchecked((cursor[c] += k));
        }
        cl.pods = pods.length;
        const price = claimPrice(cl);
        if (price == Infinity) { ok = false; break; }
        newCost += price;
        fresh.push(cl);
        freshPods.push(pods);
      }
    }
    if (!ok) continue;
    const better = newCost < oldCost - 0.5 || (Math.abs(newCost - oldCost) <= 0.5 && fresh.length < oldCount);
    if (!better) continue;
    // Limits: the new claims must fit within what the old ones reserved plus what is left.
    const lim = limitsOf(t);
    const room = new Float64Array(NLD + 1);
    for (let d = 0; d <= NLD; d++) unchecked((room[d] = unchecked(lim[d])));
    for (let i = 0; i < oldClaims.length; i++) {
      const r = claimAt(unchecked(oldClaims[i])).reserved;
      for (let d = 0; d < r.length; d++) unchecked((room[d] += unchecked(r[d])));
    }
    const reserved = new Array<Float64Array>();
    for (let i = 0; i < fresh.length; i++) {
      const r = maxCapacity(unchecked(fresh[i]));
      reserved.push(r);
      for (let d = 0; d <= NLD; d++) unchecked((room[d] -= unchecked(r[d])));
    }
    let within = true;
    for (let d = 0; d <= NLD; d++) if (unchecked(room[d]) < -1e-6) within = false;
    if (!within) continue;
    // Commit: retire the old claims, add the new ones, move the pods.
    for (let i = 0; i < oldClaims.length; i++) {
      const c = claimAt(unchecked(oldClaims[i]));
      c.pods = 0;
      c.liveLen = 0;
    }
    for (let d = 0; d <= NLD; d++) unchecked((lim[d] = unchecked(room[d])));
    for (let i = 0; i < fresh.length; i++) {
      const cl = unchecked(fresh[i]);
      cl.reserved = unchecked(reserved[i]);
      const ci = pushClaim(cl);
      const pods = unchecked(freshPods[i]);
      for (let q = 0; q < pods.length; q++) unchecked((placement[unchecked(pods[q])] = -(ci + 2)));
    }
    changed++;
  }
  return changed;
}
