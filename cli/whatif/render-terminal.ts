// The terminal report: what the run did, the risks first, then the money (before, after, where the savings
// come from, per NodePool, zone, capacity type and family), the per-node table in eks-node-viewer's style
// (grouped above GROUP_ABOVE nodes), the moves, and the explanations (identical ones grouped). Colour only
// on a terminal. Numbers go through numbers.ts (separators, "-$17.99", plurals); the JSON keeps raw numbers.
import {
  formatBytes,
  formatMillicores,
  safeStrings,
  type CostGroup,
  type Move,
  type NodeRow,
  type Risk,
  type WhatIfReport,
} from '../../engine/index.ts';
import { change, count, perHour, perMonth, plural, someOf, usd } from './numbers.ts';
import { migrationLines } from './render-migration.ts';

interface Style {
  readonly color: boolean;
}

const CODES = { green: 32, red: 31, yellow: 33, dim: 2, bold: 1, cyan: 36 } as const;
type Colour = keyof typeof CODES;

/** Above this many nodes the node table is grouped (fate, NodePool, type, zone, capacity type) with counts. */
export const GROUP_ABOVE = 50;

function paint(st: Style, c: Colour, text: string): string {
  return st.color ? `\x1b[${CODES[c]}m${text}\x1b[0m` : text;
}

/** A bar of `width` cells, filled in proportion; colour by how full (green < 70% < yellow < 90% < red). */
function bar(st: Style, used: number, total: number, width = 20): string {
  const f = total > 0 ? Math.min(1, Math.max(0, used / total)) : 0;
  const full = Math.round(f * width);
  const cells = '█'.repeat(full) + '░'.repeat(width - full);
  const label = `${(f * 100).toFixed(0).padStart(3)}%`;
  return `${paint(st, f >= 0.9 ? 'red' : f >= 0.7 ? 'yellow' : 'green', cells)} ${label}`;
}

function table(rows: readonly string[][], rightAlign: ReadonlySet<number> = new Set()): string[] {
  const strip = (s: string): number => s.replace(/\x1b\[[0-9;]*m/g, '').length;
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => strip(r[i] ?? ''))));
  return rows.map((r) =>
    r
      .map((c, i) =>
        rightAlign.has(i) ? ' '.repeat(widths[i]! - strip(c)) + c : c + ' '.repeat(widths[i]! - strip(c)),
      )
      .join('  ')
      .trimEnd(),
  );
}

const FATE = { new: '+ new', removed: '- gone', kept: '  keep' } as const;

function fateOf(st: Style, f: NodeRow['fate']): string {
  return f === 'new' ? paint(st, 'green', FATE.new) : f === 'removed' ? paint(st, 'red', FATE.removed) : FATE.kept;
}

function nodeTable(st: Style, nodes: readonly NodeRow[]): string[] {
  const head = ['', 'NODE', 'TYPE', 'ZONE', 'CAPACITY', '$/H', 'CPU (requested/allocatable)', 'MEMORY', 'PODS'];
  const rows = nodes.map((r) => [
    fateOf(st, r.fate),
    r.name,
    r.instanceType ?? '?',
    r.zone ?? '?',
    r.capacityType ?? '?',
    r.priceKnown ? usd(r.pricePerHour) : paint(st, 'yellow', '?'),
    `${bar(st, r.cpu.requested, r.cpu.allocatable)} ${formatMillicores(r.cpu.requested)}/${formatMillicores(r.cpu.allocatable)}`,
    `${bar(st, r.memory.requested, r.memory.allocatable)} ${formatBytes(r.memory.requested)}/${formatBytes(r.memory.allocatable)}`,
    count(r.pods),
  ]);
  return table([head.map((h) => paint(st, 'dim', h)), ...rows], new Set([5, 8]));
}

/** Nodes grouped by fate, NodePool, type, zone and capacity type: a row per group with counts and mean use. */
export function groupedNodes(nodes: readonly NodeRow[]): { key: string[]; nodes: NodeRow[] }[] {
  const m = new Map<string, { key: string[]; nodes: NodeRow[] }>();
  for (const r of nodes) {
    const key = [r.fate, r.nodePool ?? '-', r.instanceType ?? '?', r.zone ?? '?', r.capacityType ?? '?'];
    const k = key.join('\0');
    const g = m.get(k) ?? { key, nodes: [] };
    g.nodes.push(r);
    m.set(k, g);
  }
  const order = { removed: 0, kept: 1, new: 2 } as const;
  return [...m.values()].sort(
    (a, b) =>
      order[a.key[0] as NodeRow['fate']] - order[b.key[0] as NodeRow['fate']] ||
      b.nodes.length - a.nodes.length ||
      a.key.join().localeCompare(b.key.join()),
  );
}

function groupedTable(st: Style, nodes: readonly NodeRow[]): string[] {
  const head = [
    '',
    'NODES',
    'NODEPOOL',
    'TYPE',
    'ZONE',
    'CAPACITY',
    '$/H EACH',
    'CPU (requested/allocatable, all)',
    'MEMORY',
    'PODS',
  ];
  const sum = (rs: readonly NodeRow[], f: (r: NodeRow) => number) => rs.reduce((a, r) => a + f(r), 0);
  const rows = groupedNodes(nodes).map(({ key, nodes: rs }) => [
    fateOf(st, key[0] as NodeRow['fate']),
    count(rs.length),
    key[1]!,
    key[2]!,
    key[3]!,
    key[4]!,
    usd(rs[0]!.pricePerHour),
    bar(
      st,
      sum(rs, (r) => r.cpu.requested),
      sum(rs, (r) => r.cpu.allocatable),
    ),
    bar(
      st,
      sum(rs, (r) => r.memory.requested),
      sum(rs, (r) => r.memory.allocatable),
    ),
    count(sum(rs, (r) => r.pods)),
  ]);
  return table([head.map((h) => paint(st, 'dim', h)), ...rows], new Set([1, 6, 9]));
}

function moveLines(st: Style, m: Move): string[] {
  const parts = [
    ...(m.remove.length ? [`remove ${someOf(m.remove, 4)}`] : []),
    ...(m.add.length ? [`add ${someOf(m.add, 4)}`] : []),
  ];
  const money =
    m.savingsPerHour === 0
      ? 'no cost change'
      : m.savingsPerHour > 0
        ? paint(st, 'green', change(m.savingsPerHour))
        : paint(st, 'yellow', change(m.savingsPerHour));
  const out = [
    `  ${paint(st, 'bold', `${m.step}. ${m.kind}`)}: ${parts.join('; ') || 'no node changes'} (${money}) — ${m.reason}`,
  ];
  const shown = m.pods.slice(0, 8);
  for (const p of shown) out.push(`       ${p.pod}: ${p.from ?? 'pending'} -> ${p.to ?? '?'}`);
  if (m.pods.length > shown.length) out.push(`       ... and ${plural(m.pods.length - shown.length, 'more pod')}`);
  return out;
}

const SEVERITY_COLOUR = { high: 'red', medium: 'yellow', low: 'dim' } as const;

function riskLines(st: Style, risks: readonly Risk[]): string[] {
  if (!risks.length)
    return ['  none found (zone and spot spread, instance types, pods moved twice, blocked nodes checked)'];
  return risks.flatMap((r) => [
    `  ${paint(st, SEVERITY_COLOUR[r.severity], r.severity.padEnd(6))} ${r.summary}`,
    ...(r.nodes.length ? [`         nodes: ${someOf(r.nodes, 5)}`] : []),
    ...(r.pods.length ? [`         pods: ${someOf(r.pods, 5)}`] : []),
    `         ${paint(st, 'cyan', 'to avoid')}: ${r.fix}`,
  ]);
}

export const BREAKDOWN_WORDS: Readonly<Record<string, string>> = {
  newCapacity: 'new capacity for pending pods',
  emptyNodes: 'empty nodes removed',
  reservations: 'reservations still paid when their nodes go',
  capacityType: 'spot instead of on-demand (capacity type)',
  packing: 'less capacity bought (fuller or smaller nodes)',
  instanceType: 'cheaper instance types (family, generation, arch)',
};

function breakdownLines(r: WhatIfReport): string[] {
  const b = r.savingsBreakdown;
  const rows = b.order
    .filter((k) => b.perHour[k] !== 0)
    .map((k) => [`  ${BREAKDOWN_WORDS[k]}`, perHour(b.perHour[k]), perMonth(b.perHour[k] * 730)]);
  return table([...rows, ['  total', perHour(r.savingsPerHour), perMonth(r.savingsPerHour * 730)]], new Set([1, 2]));
}

function groupLines(title: string, groups: readonly CostGroup[]): string[] {
  const rows = groups.map((g) => [
    `  ${g.key}`,
    `${count(g.nodesBefore)} -> ${count(g.nodesAfter)}`,
    perHour(g.costPerHourBefore),
    '->',
    perHour(g.costPerHourAfter),
  ]);
  return [`${title}`, ...table([['  ', 'NODES', '$/H BEFORE', '', '$/H AFTER'], ...rows], new Set([1, 2, 4]))];
}

function summaryLines(st: Style, r: WhatIfReport): string[] {
  const c = r.counts;
  const share =
    r.costPerHourBefore > 0 ? ` (${((r.savingsPerHour / r.costPerHourBefore) * 100).toFixed(1)}% of before)` : '';
  const x = (cost: number): string =>
    r.lowerBoundPerHour > 0 ? `${(cost / r.lowerBoundPerHour).toFixed(2)}x the bound` : 'bound n/a';
  const money = `${change(r.savingsPerHour)} (${perMonth(Math.abs(r.savingsPerHour) * 730)})${r.savingsPerHour >= 0 ? share : ''}`;
  return [
    `before: ${plural(c.nodesBefore, 'node')}  ${perHour(r.costPerHourBefore)}  ${perMonth(r.costPerMonthBefore)}  (${x(r.costPerHourBefore)})`,
    `after:  ${plural(c.nodesAfter, 'node')}  ${perHour(r.costPerHourAfter)}  ${perMonth(r.costPerMonthAfter)}  (${x(r.costPerHourAfter)})`,
    `change: ${paint(st, r.savingsPerHour >= 0 ? 'green' : 'yellow', money)}`,
    `lower bound: ${perHour(r.lowerBoundPerHour)} (${r.lowerBoundKind}, ${r.lowerBoundStatus}): no cluster on these NodePools hosting these pods costs less`,
    `${plural(c.pods, 'pod')}, ${count(c.pending)} pending, ${count(c.unschedulable)} unschedulable`,
  ];
}

/** The price caveats every report carries. */
export function priceLines(r: WhatIfReport): string[] {
  const p = r.prices;
  return [
    `prices: on-demand ${p.live ? `live from the AWS Pricing API (read ${p.onDemand.asOf})` : `from the table of ${p.onDemand.asOf}`}; spot ${p.spot.estimate ? `prices are estimates (Spot Instance Advisor savings as of ${p.spot.asOf})` : `live from DescribeSpotPriceHistory (read ${p.spot.asOf})`}`,
    ...(p.fallbackTypes.length
      ? [
          `        ${plural(p.fallbackTypes.length, 'instance type')} priced from ${p.fallbackSource ?? 'another table'}: ${someOf(p.fallbackTypes, 4)}`,
        ]
      : []),
    ...(p.reservedNodes
      ? [
          `        ${plural(p.reservedNodes, 'reserved node')} priced at the reservation's rate, paid whether used or not`,
        ]
      : []),
  ];
}

/** Identical explanations together: "3 nodes: reason (a, b and c)". */
export function groupedReasons(
  items: readonly { node: string; reason: string }[],
): { reason: string; nodes: string[] }[] {
  const m = new Map<string, string[]>();
  for (const k of items) m.set(k.reason, [...(m.get(k.reason) ?? []), k.node]);
  return [...m]
    .map(([reason, nodes]) => ({ reason, nodes }))
    .sort((a, b) => b.nodes.length - a.nodes.length || a.reason.localeCompare(b.reason));
}

function explanationLines(st: Style, r: WhatIfReport): string[] {
  const out: string[] = [];
  if (r.unschedulable.length > 0) {
    out.push('', paint(st, 'bold', 'Pods that cannot be placed'));
    for (const u of r.unschedulable) {
      out.push(`  ${u.pod}: ${u.reason}`);
      for (const [pool, why] of Object.entries(u.perNodePool ?? {})) out.push(`      NodePool ${pool}: ${why}`);
    }
  }
  if (r.kept.length > 0) {
    out.push('', paint(st, 'bold', 'Nodes kept'));
    for (const g of groupedReasons(r.kept))
      out.push(
        g.nodes.length === 1
          ? `  ${g.nodes[0]}: ${g.reason}`
          : `  ${plural(g.nodes.length, 'node')}: ${g.reason} (${someOf(g.nodes, 3)})`,
      );
  }
  if (r.warnings.length > 0) {
    out.push('', paint(st, 'yellow', 'Assumptions'));
    for (const w of r.warnings) out.push(`  ${w}`);
  }
  return out;
}

export function renderTerminal(report: WhatIfReport, st: Style): string {
  // Names and messages from the input, with control and bidirectional characters escaped (engine/domain/text.ts).
  const r = safeStrings(report);
  const out: string[] = [];
  out.push(paint(st, 'bold', `karpenter-ts what-if: ${r.input.sources.join(', ')}`));
  out.push(
    `region ${r.input.region}, at ${r.input.now}, mode ${r.input.mode}, ${r.input.exact ? "Karpenter's exact algorithm" : 'optimised solver'}${r.input.planner ? `, planner: ${r.input.planner}` : ''}`,
  );
  for (const n of r.notes) out.push(paint(st, 'cyan', `note: ${n}`));
  out.push(...priceLines(r));
  out.push('', paint(st, 'bold', 'Risks'), ...riskLines(st, r.risks));
  out.push(
    ...migrationLines(
      r,
      (c, t) => paint(st, c, t),
      (rows) => table(rows),
    ),
  );
  out.push('', paint(st, 'bold', 'Cost'), ...summaryLines(st, r));
  out.push('', paint(st, 'bold', 'Where the change comes from'), ...breakdownLines(r));
  const b = r.savingsBreakdown;
  out.push(
    '',
    ...groupLines(paint(st, 'bold', 'By NodePool'), b.byNodePool),
    '',
    ...groupLines(paint(st, 'bold', 'By zone'), b.byZone),
  );
  out.push(
    '',
    ...groupLines(paint(st, 'bold', 'By capacity type'), b.byCapacityType),
    '',
    ...groupLines(paint(st, 'bold', 'By instance family'), b.byFamily),
  );
  out.push(
    '',
    paint(st, 'bold', r.nodes.length > GROUP_ABOVE ? `Nodes (${count(r.nodes.length)}, grouped)` : 'Nodes'),
    ...(r.nodes.length > GROUP_ABOVE ? groupedTable(st, r.nodes) : nodeTable(st, r.nodes)),
  );
  out.push('', paint(st, 'bold', 'Moves'));
  if (r.moves.length === 0)
    out.push(
      r.input.mode === 'provision'
        ? '  none: no pending pod needs a node (pending pods only; run with --mode consolidate to see consolidation)'
        : '  none: nothing to launch, and no consolidation saves money within the budgets',
    );
  for (const m of r.moves) out.push(...moveLines(st, m));
  out.push(...explanationLines(st, r));
  return out.join('\n') + '\n';
}
