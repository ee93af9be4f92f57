// Evaluating a scenario's waitFor / expect conditions against the simulated cluster.
import type { KObject } from '../apiserver/index.ts';
import type { Simulation } from '../environment.ts';
import { clusterCost } from '../view.ts';
import type { Conditions, Count } from './format.ts';

const holds = (c: Count, v: number): boolean =>
  c.op === '==' ? v === c.n : c.op === '>=' ? v >= c.n : c.op === '<=' ? v <= c.n : c.op === '>' ? v > c.n : v < c.n;

const show = (c: Count): string => (c.op === '==' ? String(c.n) : `${c.op}${c.n}`);

function selected(p: KObject, cond: Conditions): boolean {
  if (cond.namespace ? p.metadata.namespace !== cond.namespace : p.metadata.namespace === 'kube-system') return false;
  if (!cond.selector) return true;
  const labels = p.metadata.labels ?? {};
  return cond.selector.split(',').every((kv) => {
    const [k, v] = kv.split('=').map((s) => s.trim());
    return k !== undefined && labels[k] === v;
  });
}

const ready = (n: KObject): boolean =>
  ((n.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
    (c) => c.type === 'Ready' && c.status === 'True',
  );
const phase = (p: KObject): string | undefined => (p.status as { phase?: string } | undefined)?.phase;

/** Each condition with its current value; `ok` when all hold. */
export function evaluate(sim: Simulation, cond: Conditions): { ok: boolean; report: string } {
  const store = sim.cluster.store;
  const nodes = store.list('nodes');
  const pods = store.list('pods').filter((p) => !p.metadata.deletionTimestamp && selected(p, cond));
  const parts: Array<{ ok: boolean; text: string }> = [];
  const check = (label: string, want: Count | undefined, got: number): void => {
    if (want) parts.push({ ok: holds(want, got), text: `${label}=${got} (want ${show(want)})` });
  };
  check('nodes', cond.nodes, nodes.length);
  check('readyNodes', cond.readyNodes, nodes.filter(ready).length);
  check('nodeClaims', cond.nodeClaims, store.list('nodeclaims.karpenter.sh').length);
  check('runningPods', cond.runningPods, pods.filter((p) => phase(p) === 'Running').length);
  check('pendingPods', cond.pendingPods, pods.filter((p) => phase(p) === 'Pending').length);
  check(
    'spotNodes',
    cond.spotNodes,
    nodes.filter((n) => n.metadata.labels?.['karpenter.sh/capacity-type'] === 'spot').length,
  );
  check(
    'onDemandNodes',
    cond.onDemandNodes,
    nodes.filter((n) => n.metadata.labels?.['karpenter.sh/capacity-type'] === 'on-demand').length,
  );
  check(
    'reservedNodes',
    cond.reservedNodes,
    nodes.filter((n) => n.metadata.labels?.['karpenter.sh/capacity-type'] === 'reserved').length,
  );
  check(
    'driftedNodeClaims',
    cond.driftedNodeClaims,
    store
      .list('nodeclaims.karpenter.sh')
      .filter((c) =>
        ((c.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
          (x) => x.type === 'Drifted' && x.status === 'True',
        ),
      ).length,
  );
  if (cond.podZones) {
    const zoneOf = new Map(nodes.map((n) => [n.metadata.name, n.metadata.labels?.['topology.kubernetes.io/zone']]));
    const zones = new Set(
      pods
        .filter((p) => phase(p) === 'Running')
        .map((p) => zoneOf.get((p.spec as { nodeName?: string } | undefined)?.nodeName ?? ''))
        .filter((z) => z !== undefined),
    );
    check('zones of running pods', cond.podZones, zones.size);
  }
  if (cond.nodePoolNodes)
    check(
      `nodes of nodepool ${cond.nodePoolNodes.nodePool}`,
      cond.nodePoolNodes.count,
      nodes.filter((n) => n.metadata.labels?.['karpenter.sh/nodepool'] === cond.nodePoolNodes!.nodePool).length,
    );
  if (cond.events) {
    const ev = cond.events;
    const n = store
      .list('events')
      .filter(
        (e) => e['reason'] === ev.reason && (!ev.message || String(e['message'] ?? '').includes(ev.message)),
      ).length;
    check(`events ${ev.reason}${ev.message ? ` containing "${ev.message}"` : ''}`, ev.count, n);
  }
  if (cond.costPerHourAtMost !== undefined) {
    const cost = clusterCost(sim);
    parts.push({
      ok: cost <= cond.costPerHourAtMost + 1e-9,
      text: `cost=$${cost.toFixed(4)}/h (want <= $${cond.costPerHourAtMost})`,
    });
  }
  return { ok: parts.every((p) => p.ok), report: parts.map((p) => p.text).join(', ') };
}
