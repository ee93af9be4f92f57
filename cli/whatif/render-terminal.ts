// The terminal report: a cost summary, the per-node table in eks-node-viewer's style (cpu and memory bars of
// requests against allocatable), the moves in order, then the explanations. Colour only on a terminal.
import { formatBytes, formatMillicores, type Move, type NodeRow, type WhatIfReport } from '../../engine/index.ts';

export interface Style {
  readonly color: boolean;
}

const CODES = { green: 32, red: 31, yellow: 33, dim: 2, bold: 1, cyan: 36 } as const;
type Colour = keyof typeof CODES;

function paint(st: Style, c: Colour, text: string): string {
  return st.color ? `\x1b[${CODES[c]}m${text}\x1b[0m` : text;
}

export const usd = (v: number): string => `$${v.toFixed(v !== 0 && Math.abs(v) < 0.01 ? 4 : 3)}`;
export const usdMonth = (v: number): string => `$${v.toFixed(2)}`;
const pct = (v: number | null): string => (v === null ? 'n/a' : `${(v * 100).toFixed(1)}%`);

/** A bar of `width` cells, filled in proportion; colour by how full (green < 70% < yellow < 90% < red). */
export function bar(st: Style, used: number, total: number, width = 20): string {
  const f = total > 0 ? Math.min(1, used / total) : 0;
  const full = Math.round(f * width);
  const cells = '█'.repeat(full) + '░'.repeat(width - full);
  const label = `${(f * 100).toFixed(0).padStart(3)}%`;
  return `${paint(st, f >= 0.9 ? 'red' : f >= 0.7 ? 'yellow' : 'green', cells)} ${label}`;
}

function table(rows: readonly string[][], rightAlign: ReadonlySet<number> = new Set()): string[] {
  const strip = (s: string): number => s.replace(/\x1b\[[0-9;]*m/g, '').length;
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => strip(r[i] ?? ''))));
  return rows.map((r) => r.map((c, i) => (rightAlign.has(i) ? ' '.repeat(widths[i]! - strip(c)) + c : c + ' '.repeat(widths[i]! - strip(c)))).join('  ').trimEnd());
}

function nodeTable(st: Style, nodes: readonly NodeRow[]): string[] {
  const fate = (r: NodeRow): string => (r.fate === 'new' ? paint(st, 'green', '+ new') : r.fate === 'removed' ? paint(st, 'red', '- gone') : '  keep');
  const head = ['', 'NODE', 'TYPE', 'ZONE', 'CAPACITY', '$/H', 'CPU (requested/allocatable)', 'MEMORY', 'PODS'];
  const rows = nodes.map((r) => [
    fate(r), r.name, r.instanceType ?? '?', r.zone ?? '?', r.capacityType ?? '?',
    r.priceKnown ? usd(r.pricePerHour) : paint(st, 'yellow', '?'),
    `${bar(st, r.cpu.requested, r.cpu.allocatable)} ${formatMillicores(r.cpu.requested)}/${formatMillicores(r.cpu.allocatable)}`,
    `${bar(st, r.memory.requested, r.memory.allocatable)} ${formatBytes(r.memory.requested)}/${formatBytes(r.memory.allocatable)}`,
    String(r.pods),
  ]);
  return table([head.map((h) => paint(st, 'dim', h)), ...rows], new Set([5, 8]));
}

function moveLines(st: Style, m: Move): string[] {
  const what = m.kind === 'launch' ? 'launch' : m.kind === 'delete' ? 'delete' : 'replace';
  const parts = [
    ...(m.remove.length ? [`remove ${m.remove.join(', ')}`] : []),
    ...(m.add.length ? [`add ${m.add.join(', ')}`] : []),
  ];
  const money = m.savingsPerHour === 0 ? 'no cost change' : m.savingsPerHour > 0 ? paint(st, 'green', `saves ${usd(m.savingsPerHour)}/h`) : paint(st, 'yellow', `costs ${usd(-m.savingsPerHour)}/h`);
  const out = [`  ${paint(st, 'bold', `${m.step}. ${what}`)}: ${parts.join('; ') || 'no node changes'} (${money}) — ${m.reason}`];
  const shown = m.pods.slice(0, 8);
  for (const p of shown) out.push(`       ${p.pod}: ${p.from ?? 'pending'} -> ${p.to ?? '?'}`);
  if (m.pods.length > shown.length) out.push(`       ... and ${m.pods.length - shown.length} more pod(s)`);
  return out;
}

export function renderTerminal(r: WhatIfReport, st: Style): string {
  const out: string[] = [];
  const c = r.counts;
  out.push(paint(st, 'bold', `karpenter-ts what-if: ${r.input.sources.join(', ')}`));
  out.push(`region ${r.input.region}, at ${r.input.now}, mode ${r.input.mode}, ${r.input.exact ? "Karpenter's exact algorithm" : 'optimised solver'}${r.input.planner ? `, planner: ${r.input.planner}` : ''}`);
  out.push('');
  out.push(`before: ${c.nodesBefore} nodes  ${usd(r.costPerHourBefore)}/h  ${usdMonth(r.costPerMonthBefore)}/month  efficiency ${pct(r.efficiencyBefore)}`);
  out.push(`after:  ${c.nodesAfter} nodes  ${usd(r.costPerHourAfter)}/h  ${usdMonth(r.costPerMonthAfter)}/month  efficiency ${pct(r.efficiencyAfter)}`);
  const saving = r.savingsPerHour;
  out.push(`change: ${saving >= 0 ? paint(st, 'green', `saves ${usd(saving)}/h (${usdMonth(saving * 730)}/month)`) : paint(st, 'yellow', `adds ${usd(-saving)}/h (${usdMonth(-saving * 730)}/month)`)}`);
  out.push(`lower bound: ${usd(r.lowerBoundPerHour)}/h (${r.lowerBoundStatus}); ${c.pods} pods, ${c.pending} pending, ${c.unschedulable} unschedulable`);
  out.push('', paint(st, 'bold', 'Nodes'), ...nodeTable(st, r.nodes));
  out.push('', paint(st, 'bold', 'Moves'));
  if (r.moves.length === 0) out.push('  none: nothing to launch, nothing to consolidate');
  for (const m of r.moves) out.push(...moveLines(st, m));
  if (r.unschedulable.length > 0) {
    out.push('', paint(st, 'bold', 'Pods that cannot be placed'));
    for (const u of r.unschedulable) {
      out.push(`  ${u.pod}: ${u.reason}`);
      for (const [pool, why] of Object.entries(u.perNodePool ?? {})) out.push(`      NodePool ${pool}: ${why}`);
    }
  }
  if (r.kept.length > 0) {
    out.push('', paint(st, 'bold', 'Nodes kept'));
    for (const k of r.kept) out.push(`  ${k.node}: ${k.reason}`);
  }
  if (r.warnings.length > 0) {
    out.push('', paint(st, 'yellow', 'Assumptions'));
    for (const w of r.warnings) out.push(`  ${w}`);
  }
  return out.join('\n') + '\n';
}
