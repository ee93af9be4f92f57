// What the simulator shows: the node table (type, zone, capacity type, $/h, requests against allocatable,
// pods) and the cluster's cost, read from the simulated API server and the simulated cloud.
import { formatBytes, formatMillicores, parsePod, parseResources, type Resources } from '../engine/index.ts';
import type { KObject } from './apiserver/index.ts';
import type { Simulation } from './environment.ts';

interface NodeRow {
  readonly name: string;
  readonly nodePool: string;
  readonly type: string;
  readonly zone: string;
  readonly capacityType: string;
  readonly price: number;
  readonly ready: boolean;
  readonly requested: Resources;
  readonly allocatable: Resources;
  readonly pods: number;
}

const labels = (o: KObject): Record<string, string> => o.metadata.labels ?? {};
const phase = (p: KObject): string | undefined => (p.status as { phase?: string } | undefined)?.phase;

function nodeRows(sim: Simulation): NodeRow[] {
  const pods = sim.cluster.store.list('pods');
  const byNode = new Map<string, KObject[]>();
  for (const p of pods) {
    const n = (p.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!n || phase(p) === 'Succeeded' || phase(p) === 'Failed') continue;
    (byNode.get(n) ?? byNode.set(n, []).get(n)!).push(p);
  }
  return sim.cluster.store
    .list('nodes')
    .map((n) => {
      const l = labels(n);
      const mine = byNode.get(n.metadata.name!) ?? [];
      const requested: Record<string, number> = { cpu: 0, memory: 0 };
      for (const p of mine) {
        const r = parsePod(p);
        if (!r.ok) continue;
        requested['cpu']! += r.value.requests['cpu'] ?? 0;
        requested['memory']! += r.value.requests['memory'] ?? 0;
      }
      const status = (n.status ?? {}) as {
        allocatable?: Record<string, string>;
        conditions?: Array<{ type: string; status: string }>;
      };
      const pid = (n.spec as { providerID?: string } | undefined)?.providerID ?? '';
      return {
        name: n.metadata.name!,
        nodePool: l['karpenter.sh/nodepool'] ?? '',
        type: l['node.kubernetes.io/instance-type'] ?? '',
        zone: l['topology.kubernetes.io/zone'] ?? '',
        capacityType: l['karpenter.sh/capacity-type'] ?? '',
        price: sim.provider.priceOf(pid) ?? 0,
        ready: status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
        requested,
        allocatable: parseResources(status.allocatable ?? {}),
        pods: mine.length,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** $/h of every instance that is pending or running (what the account pays for now). */
export function clusterCost(sim: Simulation): number {
  return sim.provider
    .all()
    .filter((i) => i.instance.state === 'pending' || i.instance.state === 'running')
    .reduce((a, i) => a + i.price, 0);
}

const pad = (cells: string[][]): string[] => {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) =>
    r
      .map((c, i) => (i >= 5 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
};

export function nodeTable(sim: Simulation): string[] {
  const rows = nodeRows(sim);
  const cost = clusterCost(sim);
  const summary = `cluster: ${rows.length} node(s), $${cost.toFixed(4)}/h (~$${(cost * 730).toFixed(2)}/month)`;
  if (!rows.length) return [summary];
  const cells = [['NAME', 'NODEPOOL', 'TYPE', 'ZONE', 'CAPACITY', '$/H', 'CPU REQ/ALLOC', 'MEMORY REQ/ALLOC', 'PODS']];
  for (const r of rows) {
    cells.push([
      r.name + (r.ready ? '' : ' (NotReady)'),
      r.nodePool,
      r.type,
      r.zone,
      r.capacityType,
      r.price.toFixed(4),
      `${formatMillicores(r.requested['cpu'] ?? 0)}/${formatMillicores(r.allocatable['cpu'] ?? 0)}`,
      `${formatBytes(r.requested['memory'] ?? 0)}/${formatBytes(r.allocatable['memory'] ?? 0)}`,
      String(r.pods),
    ]);
  }
  return [...pad(cells), summary];
}
