// The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched). Top to bottom:
// the headline ($/month saved and the share of today's cost), the price caveats, the risks, a legend, the
// charts (cost before / after / lower bound, the savings broken down by cause, the cost after each step, the
// utilisation of the nodes: one bar pair per node up to GROUP_ABOVE nodes, a histogram above), the cost per
// NodePool, zone, capacity type and family, then the tables of the terminal report.
import {
  formatBytes,
  formatMillicores,
  type CostGroup,
  type NodeRow,
  type Risk,
  type WhatIfReport,
} from '../../engine/index.ts';
import { change, count, pct, perHour, perMonth, plural, someOf, usd } from './numbers.ts';
import { BREAKDOWN_WORDS, GROUP_ABOVE, groupedNodes, groupedReasons } from './render-terminal.ts';
import { migrationHtml } from './render-migration.ts';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const e = escapeHtml;
const FATE_COLOUR = { kept: '#4a7bd0', removed: '#9aa3ad', new: '#3c9a5f' } as const;
const FATE_WORDS = {
  kept: 'kept: stays as it is',
  removed: 'removed by the plan',
  new: 'launched by the plan',
} as const;
const GOOD = '#1f7a8c',
  BAD = '#d08a2e';
const HOURS = 730;

/** Bars for before and after, a dashed line at the lower bound. */
function costChart(r: WhatIfReport): string {
  const w = 420,
    h = 220,
    base = 180,
    top = 30;
  const max = Math.max(r.costPerHourBefore, r.costPerHourAfter, r.lowerBoundPerHour, 1e-9);
  const y = (v: number): number => base - ((base - top) * v) / max;
  const bars = [
    ['before', r.costPerHourBefore, FATE_COLOUR.kept],
    ['after', r.costPerHourAfter, FATE_COLOUR.new],
  ] as const;
  const parts = bars.map(([label, v, colour], i) => {
    const x = 70 + i * 130;
    return (
      `<g class="cost-bar" data-label="${label}"><rect x="${x}" y="${y(v).toFixed(1)}" width="90" height="${(base - y(v)).toFixed(1)}" fill="${colour}"/>` +
      `<text x="${x + 45}" y="${(y(v) - 6).toFixed(1)}" text-anchor="middle">${e(perHour(v))}</text>` +
      `<text x="${x + 45}" y="${base + 18}" text-anchor="middle">${label}</text></g>`
    );
  });
  const lb =
    r.lowerBoundPerHour > 0
      ? `<g class="lower-bound"><line x1="50" x2="${w - 20}" y1="${y(r.lowerBoundPerHour).toFixed(1)}" y2="${y(r.lowerBoundPerHour).toFixed(1)}" stroke="#555" stroke-dasharray="6 4"/>` +
        `<text x="${w - 20}" y="${(y(r.lowerBoundPerHour) - 5).toFixed(1)}" text-anchor="end" fill="#444">lower bound ${e(perHour(r.lowerBoundPerHour))}</text></g>`
      : '';
  return (
    `<svg id="cost-chart" role="img" aria-label="cost per hour before and after" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
    `<line x1="50" x2="${w - 20}" y1="${base}" y2="${base}" stroke="#333"/>${parts.join('')}${lb}</svg>`
  );
}

/** One horizontal bar per part of the savings breakdown (green saves, orange costs), on a shared zero line. */
function breakdownChart(r: WhatIfReport): string {
  const b = r.savingsBreakdown;
  const parts = [
    ...b.order.filter((k) => b.perHour[k] !== 0).map((k) => [BREAKDOWN_WORDS[k]!, b.perHour[k]] as const),
    ['total', r.savingsPerHour] as const,
  ];
  const label = 350,
    span = 260,
    rowH = 26,
    w = label + span + 120;
  const max = Math.max(...parts.map(([, v]) => Math.abs(v)), 1e-9);
  const neg = parts.some(([, v]) => v < 0);
  const zero = label + (neg ? span / 2 : 0);
  const scale = (neg ? span / 2 : span) / max;
  const rows = parts.map(([name, v], i) => {
    const y = 10 + i * rowH,
      len = Math.abs(v) * scale;
    return (
      `<g class="breakdown-bar" data-part="${e(name)}" data-value="${v}"><text x="${label - 8}" y="${y + 13}" text-anchor="end"${name === 'total' ? ' font-weight="600"' : ''}>${e(name)}</text>` +
      `<rect x="${(v < 0 ? zero - len : zero).toFixed(1)}" y="${y}" width="${Math.max(1, len).toFixed(1)}" height="18" fill="${v < 0 ? BAD : GOOD}"${name === 'total' ? ' stroke="#222"' : ''}/>` +
      `<text x="${(v < 0 ? zero + 6 : zero + len + 6).toFixed(1)}" y="${y + 13}">${e(perMonth(v * HOURS))}</text></g>`
    );
  });
  const h = 20 + parts.length * rowH;
  return (
    `<svg id="breakdown-chart" role="img" aria-label="where the savings come from, $ per month" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
    `<line x1="${zero}" x2="${zero}" y1="4" y2="${h - 4}" stroke="#333"/>${rows.join('')}</svg>`
  );
}

/** $/h after each step of the plan (step 0: provisioning), as a stepped line from today's cost down to the end. */
function stepsChart(r: WhatIfReport): string {
  const w = 560,
    h = 220,
    left = 70,
    right = 20,
    top = 20,
    base = 180;
  const points = [{ step: 'today', cost: r.costPerHourBefore }];
  let cost = r.costPerHourBefore;
  for (const m of r.moves) points.push({ step: String(m.step), cost: (cost -= m.savingsPerHour) });
  points.push({ step: 'end', cost: r.costPerHourAfter });
  const max = Math.max(...points.map((p) => p.cost), 1e-9);
  const x = (i: number) => left + (i * (w - left - right)) / Math.max(1, points.length - 1);
  const y = (v: number) => base - ((base - top) * v) / max;
  const path = points
    .map(
      (p, i) =>
        `${i === 0 ? 'M' : 'H'}${x(i).toFixed(1)}${i === 0 ? ` ${y(p.cost).toFixed(1)}` : ` V${y(p.cost).toFixed(1)}`}`,
    )
    .join(' ');
  const ticks =
    points.length <= 16
      ? points
          .map(
            (p, i) =>
              `<text x="${x(i).toFixed(1)}" y="${base + 16}" text-anchor="middle" font-size="10">${e(p.step)}</text>`,
          )
          .join('')
      : `<text x="${left}" y="${base + 16}" font-size="10">today</text><text x="${w - right}" y="${base + 16}" text-anchor="end" font-size="10">step ${count(r.moves.length)}</text>`;
  const dots = points
    .map(
      (p, i) =>
        `<circle class="step-point" data-step="${e(p.step)}" data-cost="${p.cost.toFixed(6)}" cx="${x(i).toFixed(1)}" cy="${y(p.cost).toFixed(1)}" r="3" fill="${GOOD}"><title>${e(`${p.step}: ${perHour(p.cost)}`)}</title></circle>`,
    )
    .join('');
  return (
    `<svg id="steps-chart" role="img" aria-label="cost per hour after each step of the plan" width="${w}" height="${h + 10}" viewBox="0 0 ${w} ${h + 10}">` +
    `<line x1="${left}" x2="${w - right}" y1="${base}" y2="${base}" stroke="#333"/><text x="${left - 6}" y="${y(max) + 4}" text-anchor="end" font-size="10">${e(perHour(max))}</text>` +
    `<text x="${left - 6}" y="${base}" text-anchor="end" font-size="10">$0</text><path d="${path}" fill="none" stroke="${GOOD}" stroke-width="2"/>${dots}${ticks}</svg>`
  );
}

/** Long node names (ip-10-0-1-10.region.compute.internal) keep their first label in the chart. */
const short = (name: string): string =>
  name.length > 26 && name.includes('.') ? name.slice(0, name.indexOf('.')) : name;
const frac = (u: { requested: number; allocatable: number }): number =>
  u.allocatable > 0 ? Math.min(1, u.requested / u.allocatable) : 0;

/** Two bars per node (cpu, memory: requested / allocatable), coloured by what the plan does with the node. */
function utilisationChart(nodes: readonly NodeRow[]): string {
  const rowH = 30,
    left = 190,
    width = 300,
    h = 30 + nodes.length * rowH;
  const rows = nodes.map((n, i) => {
    const y = 24 + i * rowH;
    const c = frac(n.cpu),
      m = frac(n.memory);
    return (
      `<g class="node-util" data-node="${e(n.name)}" data-fate="${n.fate}">` +
      `<text x="${left - 8}" y="${y + 11}" text-anchor="end"><title>${e(n.name)}</title>${e(short(n.name))}</text>` +
      `<rect x="${left}" y="${y}" width="${width}" height="10" fill="#eee"/><rect class="cpu" x="${left}" y="${y}" width="${(c * width).toFixed(1)}" height="10" fill="${FATE_COLOUR[n.fate]}"/>` +
      `<rect x="${left}" y="${y + 12}" width="${width}" height="10" fill="#eee"/><rect class="memory" x="${left}" y="${y + 12}" width="${(m * width).toFixed(1)}" height="10" fill="${FATE_COLOUR[n.fate]}" opacity="0.55"/>` +
      `<text x="${left + width + 6}" y="${y + 9}" font-size="10">cpu ${(c * 100).toFixed(0)}%</text><text x="${left + width + 6}" y="${y + 21}" font-size="10">mem ${(m * 100).toFixed(0)}%</text></g>`
    );
  });
  return (
    `<svg id="util-chart" role="img" aria-label="requested over allocatable per node" width="${left + width + 70}" height="${h}" viewBox="0 0 ${left + width + 70} ${h}">` +
    `<text x="${left}" y="14" font-size="11">cpu (dark) and memory (light), requested / allocatable</text>${rows.join('')}</svg>`
  );
}

/**
 * How full the nodes are, before and after, for clusters too big for a bar per node: nodes per 10% band of
 * cpu requested / allocatable, before (kept + removed) next to after (kept + new).
 */
function utilisationHistogram(nodes: readonly NodeRow[]): string {
  const bands = (rows: readonly NodeRow[]) => {
    const out = Array.from({ length: 10 }, () => 0);
    for (const r of rows) out[Math.min(9, Math.floor(frac(r.cpu) * 10))]!++;
    return out;
  };
  const before = bands(nodes.filter((n) => n.fate !== 'new')),
    after = bands(nodes.filter((n) => n.fate !== 'removed'));
  const w = 560,
    base = 190,
    top = 20,
    left = 40,
    slot = (w - left - 10) / 10;
  const max = Math.max(...before, ...after, 1);
  const y = (v: number) => base - ((base - top) * v) / max;
  const bars = before.map((b, i) => {
    const a = after[i]!,
      x = left + i * slot;
    return (
      `<g class="hist-band" data-band="${i * 10}-${i * 10 + 10}" data-before="${b}" data-after="${a}">` +
      `<rect x="${(x + 4).toFixed(1)}" y="${y(b).toFixed(1)}" width="${(slot / 2 - 5).toFixed(1)}" height="${(base - y(b)).toFixed(1)}" fill="${FATE_COLOUR.removed}"><title>before: ${b} nodes</title></rect>` +
      `<rect x="${(x + slot / 2).toFixed(1)}" y="${y(a).toFixed(1)}" width="${(slot / 2 - 5).toFixed(1)}" height="${(base - y(a)).toFixed(1)}" fill="${FATE_COLOUR.new}"><title>after: ${a} nodes</title></rect>` +
      `<text x="${(x + slot / 2).toFixed(1)}" y="${base + 14}" text-anchor="middle" font-size="10">${i * 10}%</text></g>`
    );
  });
  return (
    `<svg id="util-histogram" role="img" aria-label="nodes per cpu utilisation band, before and after" width="${w}" height="${base + 40}" viewBox="0 0 ${w} ${base + 40}">` +
    `<line x1="${left}" x2="${w - 10}" y1="${base}" y2="${base}" stroke="#333"/><text x="${left - 6}" y="${y(max) + 4}" text-anchor="end" font-size="10">${max}</text>` +
    `${bars.join('')}<text x="${left}" y="${base + 32}" font-size="11">cpu requested / allocatable per node (grey: before, green: after)</text></svg>`
  );
}

function tableHtml(
  id: string,
  head: readonly string[],
  rows: readonly (readonly string[])[],
  numeric: ReadonlySet<number> = new Set(),
): string {
  if (rows.length === 0) return `<p class="none" id="${id}">none</p>`;
  const cell = (c: string, i: number, tag: 'td' | 'th') =>
    `<${tag}${numeric.has(i) ? ' class="num"' : ''}>${e(c)}</${tag}>`;
  return `<table id="${id}"><thead><tr>${head.map((h, i) => cell(h, i, 'th')).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c, i) => cell(c, i, 'td')).join('')}</tr>`).join('')}</tbody></table>`;
}

function headline(r: WhatIfReport): string {
  const saved = r.savingsPerHour;
  const share = r.costPerHourBefore > 0 ? ` (${pct(saved / r.costPerHourBefore)} of today's cost)` : '';
  const big =
    saved >= 0 ? `Saves ${perMonth(saved * HOURS)}${share}` : `Adds ${perMonth(-saved * HOURS)} for pending pods`;
  return (
    `<section id="headline"><p class="big ${saved >= 0 ? 'good' : 'bad'}">${e(big)}</p>` +
    `<p>${e(`${perHour(r.costPerHourBefore)} today -> ${perHour(r.costPerHourAfter)} after the plan (${change(saved)}); ${plural(r.counts.nodesBefore, 'node')} -> ${plural(r.counts.nodesAfter, 'node')}, ${plural(r.moves.length, 'step')}`)}</p>` +
    `${r.notes.map((n) => `<p class="note">${e(n)}</p>`).join('')}</section>`
  );
}

function caveats(r: WhatIfReport): string {
  const p = r.prices;
  const items = [
    `On-demand prices: ${p.live ? `live from the AWS Pricing API, read ${p.onDemand.asOf}` : `the price table of ${p.onDemand.asOf}`}.`,
    p.spot.estimate
      ? `Spot prices are estimates: on-demand less the Spot Instance Advisor's typical saving (as of ${p.spot.asOf}); real spot prices vary by zone and hour.`
      : `Spot prices: live from DescribeSpotPriceHistory, read ${p.spot.asOf} (they change by zone and hour).`,
    ...(p.fallbackTypes.length
      ? [
          `${plural(p.fallbackTypes.length, 'instance type')} priced from ${p.fallbackSource ?? 'another table'}: ${someOf(p.fallbackTypes, 6)}.`,
        ]
      : []),
    ...(p.reservedNodes
      ? [
          `${plural(p.reservedNodes, 'reserved node')} (capacity reservations) are priced at the reservation's rate, paid whether used or not: removing one saves nothing until the reservation ends.`,
        ]
      : []),
  ];
  return (
    `<section id="prices"><h2>Prices</h2><ul>${items.map((i) => `<li>${e(i)}</li>`).join('')}</ul>` +
    `<p><small>Sources: on-demand: ${e(p.onDemand.source)}; spot: ${e(p.spot.source)}</small></p></section>`
  );
}

function risksHtml(risks: readonly Risk[]): string {
  if (!risks.length)
    return '<section id="risks"><h2>Risks</h2><p class="none">None found: zone and spot spread, instance types, pods moved twice and blocked nodes were checked.</p></section>';
  const items = risks.map(
    (r) =>
      `<li class="risk ${r.severity}" data-kind="${r.kind}"><span class="sev">${r.severity}</span> ${e(r.summary)}` +
      `${r.nodes.length ? `<br><small>nodes: ${e(someOf(r.nodes, 8))}</small>` : ''}${r.pods.length ? `<br><small>pods: ${e(someOf(r.pods, 8))}</small>` : ''}` +
      `<br><b>To avoid:</b> ${e(r.fix)}</li>`,
  );
  return `<section id="risks"><h2>Risks (${risks.length})</h2><ul>${items.join('')}</ul></section>`;
}

function legend(): string {
  const sw = (c: string) => `<span class="sw" style="background:${c}"></span>`;
  return (
    `<section id="legend"><h2>Legend</h2><ul>${(Object.keys(FATE_COLOUR) as (keyof typeof FATE_COLOUR)[]).map((k) => `<li>${sw(FATE_COLOUR[k])}${e(FATE_WORDS[k])}</li>`).join('')}` +
    `<li>${sw(GOOD)}saves money ${sw(BAD)}costs money</li>` +
    '<li><b>lower bound</b>: the cost of the cheapest mix of instance types that could hold these pods on these NodePools (an LP relaxation): no real cluster costs less. <b>efficiency</b> = lower bound / cost, so 100% means nothing cheaper exists; it is not how full the nodes are.</li>' +
    '<li><b>utilisation</b>: requests of the pods on a node over its allocatable capacity.</li></ul></section>'
  );
}

function groupTable(id: string, title: string, groups: readonly CostGroup[]): string {
  return `<div><h3>${e(title)}</h3>${tableHtml(
    id,
    ['', 'nodes', '$/h before', '$/h after', 'change'],
    groups.map((g) => [
      g.key,
      `${count(g.nodesBefore)} -> ${count(g.nodesAfter)}`,
      perHour(g.costPerHourBefore),
      perHour(g.costPerHourAfter),
      change(g.costPerHourBefore - g.costPerHourAfter),
    ]),
    new Set([1, 2, 3]),
  )}</div>`;
}

function nodesHtml(r: WhatIfReport): string {
  if (r.nodes.length > GROUP_ABOVE) {
    return (
      `<h2>Nodes (${count(r.nodes.length)}, grouped)</h2>` +
      tableHtml(
        'nodes',
        ['', 'nodes', 'NodePool', 'type', 'zone', 'capacity', '$/h each', 'cpu (all)', 'memory (all)', 'pods'],
        groupedNodes(r.nodes).map(({ key, nodes }) => {
          const sum = (f: (n: NodeRow) => number) => nodes.reduce((a, n) => a + f(n), 0);
          return [
            key[0]!,
            count(nodes.length),
            key[1]!,
            key[2]!,
            key[3]!,
            key[4]!,
            usd(nodes[0]!.pricePerHour),
            pct(
              sum((n) => n.cpu.requested) /
                Math.max(
                  1,
                  sum((n) => n.cpu.allocatable),
                ),
              0,
            ),
            pct(
              sum((n) => n.memory.requested) /
                Math.max(
                  1,
                  sum((n) => n.memory.allocatable),
                ),
              0,
            ),
            count(sum((n) => n.pods)),
          ];
        }),
        new Set([1, 6, 9]),
      )
    );
  }
  return (
    '<h2>Nodes</h2>' +
    tableHtml(
      'nodes',
      ['', 'node', 'type', 'zone', 'capacity', '$/h', 'cpu', 'memory', 'pods'],
      r.nodes.map((n) => [
        n.fate,
        n.name,
        n.instanceType ?? '?',
        n.zone ?? '?',
        n.capacityType ?? '?',
        n.priceKnown ? usd(n.pricePerHour) : '?',
        `${formatMillicores(n.cpu.requested)} / ${formatMillicores(n.cpu.allocatable)}`,
        `${formatBytes(n.memory.requested)} / ${formatBytes(n.memory.allocatable)}`,
        count(n.pods),
      ]),
      new Set([5, 8]),
    )
  );
}

function tablesHtml(r: WhatIfReport): string {
  const moves = tableHtml(
    'moves',
    ['step', 'kind', 'remove', 'add', 'pods', '$/h saved', 'why'],
    r.moves.map((m) => [
      String(m.step),
      m.kind,
      someOf(m.remove, 4),
      someOf(m.add, 4),
      count(m.pods.length),
      usd(m.savingsPerHour),
      m.reason,
    ]),
    new Set([4, 5]),
  );
  const unsched = tableHtml(
    'unschedulable',
    ['pod', 'reason'],
    r.unschedulable.map((u) => [u.pod, u.reason]),
  );
  const kept = tableHtml(
    'kept',
    ['nodes', 'why they stay'],
    groupedReasons(r.kept).map((g) => [
      g.nodes.length === 1 ? g.nodes[0]! : `${plural(g.nodes.length, 'node')}: ${someOf(g.nodes, 3)}`,
      g.reason,
    ]),
  );
  const warnings = r.warnings.length
    ? `<h2>Assumptions</h2><ul>${r.warnings.map((w) => `<li>${e(w)}</li>`).join('')}</ul>`
    : '';
  return `${nodesHtml(r)}<h2>Moves</h2>${moves}<h2>Pods that cannot be placed</h2>${unsched}<h2>Nodes kept</h2>${kept}${warnings}`;
}

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}h3{font-size:1em;margin:.4em 0}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}
.charts,.groups{display:flex;flex-wrap:wrap;gap:2em}svg text{font-size:12px}.big{font-size:2em;font-weight:700;margin:.2em 0}.good{color:${GOOD}}.bad{color:${BAD}}
.note{color:#0a6b8a}.risk{margin:.5em 0}.sev{display:inline-block;min-width:4.5em;font-weight:700;text-transform:uppercase;font-size:.8em}.risk.high .sev{color:#c0392b}
.risk.medium .sev{color:${BAD}}.risk.low .sev{color:#777}.sw{display:inline-block;width:1em;height:1em;margin:0 .4em 0 .8em;vertical-align:-2px;border-radius:2px}#legend ul{list-style:none;padding:0}`;

export function renderHtml(r: WhatIfReport): string {
  const b = r.savingsBreakdown;
  const util =
    r.nodes.length > GROUP_ABOVE
      ? `<h2>Utilisation (${count(r.nodes.length)} nodes)</h2>${utilisationHistogram(r.nodes)}`
      : `<h2>Utilisation per node</h2>${utilisationChart(r.nodes)}`;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>karpenter-ts what-if: ${e(r.input.sources.join(', '))}</title><style>${CSS}</style></head><body>` +
    `<h1>karpenter-ts what-if</h1><p>${e(r.input.sources.join(', '))} — region ${e(r.input.region)}, at ${e(r.input.now)}, mode ${r.input.mode}${r.input.modeSource === 'default' ? ' (default)' : ''}, ${r.input.exact ? "Karpenter's exact algorithm" : 'optimised solver'}</p>` +
    headline(r) +
    risksHtml(r.risks) +
    migrationHtml(r, e) +
    caveats(r) +
    legend() +
    `<div class="charts"><div><h2>Cost per hour</h2>${costChart(r)}</div><div><h2>Where the savings come from ($/month)</h2>${breakdownChart(r)}</div></div>` +
    `<div class="charts"><div><h2>Cost after each step</h2>${stepsChart(r)}</div><div>${util}</div></div>` +
    `<h2>Cost by NodePool, zone, capacity type and family</h2><div class="groups">${groupTable('by-nodepool', 'NodePool', b.byNodePool)}${groupTable('by-zone', 'Zone', b.byZone)}${groupTable('by-capacity-type', 'Capacity type', b.byCapacityType)}${groupTable('by-family', 'Instance family', b.byFamily)}</div>` +
    tablesHtml(r) +
    '</body></html>\n'
  );
}
