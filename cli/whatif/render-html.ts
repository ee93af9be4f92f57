// The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched) with a cost
// chart (before, after, lower bound), a utilisation chart (cpu and memory requested/allocatable per node)
// and the tables of the terminal report.
import { formatBytes, formatMillicores, type NodeRow, type WhatIfReport } from '../../engine/index.ts';
import { usd, usdMonth } from './render-terminal.ts';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const e = escapeHtml;
const FATE_COLOUR = { kept: '#4a7bd0', removed: '#c8504b', new: '#3c9a5f' } as const;

/** Bars for before and after, a dashed line at the lower bound. */
export function costChart(r: WhatIfReport): string {
  const w = 420, h = 220, base = 180, top = 30;
  const max = Math.max(r.costPerHourBefore, r.costPerHourAfter, r.lowerBoundPerHour, 1e-9);
  const y = (v: number): number => base - ((base - top) * v) / max;
  const bars = [['before', r.costPerHourBefore, '#4a7bd0'], ['after', r.costPerHourAfter, '#3c9a5f']] as const;
  const parts = bars.map(([label, v, colour], i) => {
    const x = 70 + i * 150;
    return `<g class="cost-bar" data-label="${label}"><rect x="${x}" y="${y(v).toFixed(1)}" width="90" height="${(base - y(v)).toFixed(1)}" fill="${colour}"/>`
      + `<text x="${x + 45}" y="${(y(v) - 6).toFixed(1)}" text-anchor="middle">${e(usd(v))}/h</text>`
      + `<text x="${x + 45}" y="${base + 18}" text-anchor="middle">${label}</text></g>`;
  });
  const lb = r.lowerBoundPerHour > 0
    ? `<g class="lower-bound"><line x1="50" x2="${w - 20}" y1="${y(r.lowerBoundPerHour).toFixed(1)}" y2="${y(r.lowerBoundPerHour).toFixed(1)}" stroke="#888" stroke-dasharray="6 4"/>`
      + `<text x="${w - 20}" y="${(y(r.lowerBoundPerHour) + 14).toFixed(1)}" text-anchor="end" fill="#666">lower bound ${e(usd(r.lowerBoundPerHour))}/h</text></g>`
    : '';
  return `<svg id="cost-chart" role="img" aria-label="cost per hour before and after" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">`
    + `<line x1="50" x2="${w - 20}" y1="${base}" y2="${base}" stroke="#333"/>${parts.join('')}${lb}</svg>`;
}

/** Long node names (ip-10-0-1-10.region.compute.internal) keep their first label in the chart. */
const short = (name: string): string => (name.length > 26 && name.includes('.') ? name.slice(0, name.indexOf('.')) : name);

/** Two bars per node (cpu, memory: requested / allocatable), coloured by what the plan does with the node. */
export function utilisationChart(nodes: readonly NodeRow[]): string {
  const rowH = 30, left = 190, width = 300, h = 30 + nodes.length * rowH;
  const frac = (u: { requested: number; allocatable: number }): number => (u.allocatable > 0 ? Math.min(1, u.requested / u.allocatable) : 0);
  const rows = nodes.map((n, i) => {
    const y = 24 + i * rowH;
    const c = frac(n.cpu), m = frac(n.memory);
    return `<g class="node-util" data-node="${e(n.name)}" data-fate="${n.fate}">`
      + `<text x="${left - 8}" y="${y + 11}" text-anchor="end"><title>${e(n.name)}</title>${e(short(n.name))}</text>`
      + `<rect x="${left}" y="${y}" width="${width}" height="10" fill="#eee"/><rect class="cpu" x="${left}" y="${y}" width="${(c * width).toFixed(1)}" height="10" fill="${FATE_COLOUR[n.fate]}"/>`
      + `<rect x="${left}" y="${y + 12}" width="${width}" height="10" fill="#eee"/><rect class="memory" x="${left}" y="${y + 12}" width="${(m * width).toFixed(1)}" height="10" fill="${FATE_COLOUR[n.fate]}" opacity="0.6"/>`
      + `<text x="${left + width + 6}" y="${y + 9}" font-size="10">cpu ${(c * 100).toFixed(0)}%</text><text x="${left + width + 6}" y="${y + 21}" font-size="10">mem ${(m * 100).toFixed(0)}%</text></g>`;
  });
  return `<svg id="util-chart" role="img" aria-label="requested over allocatable per node" width="${left + width + 70}" height="${h}" viewBox="0 0 ${left + width + 70} ${h}">`
    + `<text x="${left}" y="14" font-size="11">cpu (dark) and memory (light), requested / allocatable</text>${rows.join('')}</svg>`;
}

function tableHtml(id: string, head: readonly string[], rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return `<p class="none" id="${id}">none</p>`;
  return `<table id="${id}"><thead><tr>${head.map((h) => `<th>${e(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${e(c)}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
}

const CSS = `body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f4f4f4}
.summary td:first-child{font-weight:600}.charts{display:flex;flex-wrap:wrap;gap:2em}svg text{font-size:12px}.fate-new{color:#3c9a5f}.fate-removed{color:#c8504b}`;

export function renderHtml(r: WhatIfReport): string {
  const pctOf = (v: number | null): string => (v === null ? 'n/a' : `${(v * 100).toFixed(1)}%`);
  const summary = tableHtml('summary', ['', 'nodes', '$/h', '$/month', 'efficiency'], [
    ['before', String(r.counts.nodesBefore), usd(r.costPerHourBefore), usdMonth(r.costPerMonthBefore), pctOf(r.efficiencyBefore)],
    ['after', String(r.counts.nodesAfter), usd(r.costPerHourAfter), usdMonth(r.costPerMonthAfter), pctOf(r.efficiencyAfter)],
    ['lower bound', '', usd(r.lowerBoundPerHour), usdMonth(r.lowerBoundPerHour * 730), r.lowerBoundStatus],
  ]);
  const nodes = tableHtml('nodes', ['', 'node', 'type', 'zone', 'capacity', '$/h', 'cpu', 'memory', 'pods'], r.nodes.map((n) => [
    n.fate, n.name, n.instanceType ?? '?', n.zone ?? '?', n.capacityType ?? '?', n.priceKnown ? usd(n.pricePerHour) : '?',
    `${formatMillicores(n.cpu.requested)} / ${formatMillicores(n.cpu.allocatable)}`, `${formatBytes(n.memory.requested)} / ${formatBytes(n.memory.allocatable)}`, String(n.pods),
  ]));
  const moves = tableHtml('moves', ['step', 'kind', 'remove', 'add', 'pods', '$/h saved', 'why'], r.moves.map((m) => [
    String(m.step), m.kind, m.remove.join(', '), m.add.join(', '), String(m.pods.length), usd(m.savingsPerHour), m.reason,
  ]));
  const unsched = tableHtml('unschedulable', ['pod', 'reason'], r.unschedulable.map((u) => [u.pod, u.reason]));
  const kept = tableHtml('kept', ['node', 'why it stays'], r.kept.map((k) => [k.node, k.reason]));
  const warnings = r.warnings.length ? `<h2>Assumptions</h2><ul>${r.warnings.map((w) => `<li>${e(w)}</li>`).join('')}</ul>` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>karpenter-ts what-if: ${e(r.input.sources.join(', '))}</title><style>${CSS}</style></head><body>`
    + `<h1>karpenter-ts what-if</h1><p>${e(r.input.sources.join(', '))} — region ${e(r.input.region)}, at ${e(r.input.now)}, mode ${r.input.mode}, ${r.input.exact ? "Karpenter's exact algorithm" : 'optimised solver'}</p>`
    + `${summary}<div class="charts"><div><h2>Cost per hour</h2>${costChart(r)}</div><div><h2>Utilisation per node</h2>${utilisationChart(r.nodes)}</div></div>`
    + `<h2>Nodes</h2>${nodes}<h2>Moves</h2>${moves}<h2>Pods that cannot be placed</h2>${unsched}<h2>Nodes kept</h2>${kept}${warnings}</body></html>\n`;
}
