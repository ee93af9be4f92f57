// The migration part of a report (report.migration): which node group goes to which NodePool, the proposed
// NodePools with the reasons for each, what to fill in before applying them; as terminal lines, as an HTML
// section, and the proposal as a YAML file (--write-proposal) that `karpenter-ts validate` accepts.
import { stringify } from 'yaml';
import type { MigrationInfo, WhatIfReport } from '../../engine/index.ts';
import { count } from './numbers.ts';

type Paint = (kind: 'bold' | 'dim' | 'yellow', text: string) => string;
type Table = (rows: readonly string[][]) => string[];

function groupRows(m: MigrationInfo): string[][] {
  return m.groups.map((g) => [
    g.group,
    count(g.nodes.length),
    g.instanceTypes.join(', ') || '?',
    g.capacityTypes.join(', '),
    g.nodePool ?? `not migrated: ${g.reason ?? ''}`,
  ]);
}

/** Terminal lines: the mapping table, then the proposal (when the NodePools were proposed). */
export function migrationLines(r: WhatIfReport, paint: Paint, table: Table): string[] {
  const m = r.migration;
  if (!m) return [];
  const out = [
    '',
    paint(
      'bold',
      `Migration from cluster-autoscaler (${m.trigger === 'detected' ? 'detected: no node is managed by Karpenter' : '--from cluster-autoscaler'})`,
    ),
  ];
  out.push(
    ...table([
      ['NODE GROUP', 'NODES', 'TYPES', 'CAPACITY', 'NODEPOOL'].map((h) => paint('dim', h)),
      ...groupRows(m),
    ]).map((l) => `  ${l}`),
  );
  const p = m.proposal;
  if (!p) {
    out.push("  NodePools: given (--nodepools, or the snapshot's)");
    return out;
  }
  out.push(
    '',
    paint(
      'bold',
      'Proposed NodePools (--write-proposal FILE writes them as YAML; karpenter-ts validate FILE checks them)',
    ),
  );
  for (const pool of p.nodePools) {
    out.push(`  ${pool.name}`);
    for (const w of pool.why) out.push(`    ${w}`);
  }
  out.push(paint('yellow', '  Before applying:'));
  for (const n of p.notes) out.push(`    ${n}`);
  return out;
}

/** The HTML section (e escapes text). */
export function migrationHtml(r: WhatIfReport, e: (s: string) => string): string {
  const m = r.migration;
  if (!m) return '';
  const rows = groupRows(m)
    .map((row) => `<tr>${row.map((c, i) => `<td${i === 1 ? ' class="num"' : ''}>${e(c)}</td>`).join('')}</tr>`)
    .join('');
  const pools = (m.proposal?.nodePools ?? [])
    .map((p) => `<h3>${e(p.name)}</h3><ul>${p.why.map((w) => `<li>${e(w)}</li>`).join('')}</ul>`)
    .join('');
  const notes = m.proposal
    ? `<p><b>Before applying:</b></p><ul>${m.proposal.notes.map((n) => `<li>${e(n)}</li>`).join('')}</ul>`
    : "<p>NodePools: given (--nodepools, or the snapshot's).</p>";
  return (
    `<section id="migration"><h2>Migration from cluster-autoscaler</h2>` +
    `<p>${e(m.trigger === 'detected' ? 'Detected: no node of the input is managed by Karpenter.' : 'Planned with --from cluster-autoscaler.')} Each node group's nodes are replaced as Karpenter replaces drifted nodes.</p>` +
    `<table><thead><tr><th>node group</th><th>nodes</th><th>types</th><th>capacity</th><th>NodePool</th></tr></thead><tbody>${rows}</tbody></table>` +
    `${m.proposal ? `<h2>Proposed NodePools</h2>${pools}` : ''}${notes}</section>`
  );
}

const comment = (lines: readonly string[]): string => lines.map((l) => `# ${l}`.trimEnd()).join('\n');

/** The proposal as a multi-document YAML file: the EC2NodeClass, then each NodePool with its reasons as comments. */
export function proposalYaml(r: WhatIfReport): string | undefined {
  const p = r.migration?.proposal;
  if (!p) return undefined;
  const head = comment([
    `NodePools and an EC2NodeClass proposed by \`karpenter-ts whatif\` for ${r.input.sources.join(', ')} (${r.input.region}, ${r.input.now}),`,
    'to move the cluster from Cluster Autoscaler to Karpenter. Check: karpenter-ts validate FILE.',
    'Before applying:',
    ...p.notes.map((n) => `  - ${n}`),
  ]);
  const docs = p.manifests.map((m) => {
    const meta = (m['metadata'] as { name?: string } | undefined)?.name;
    const pool = p.nodePools.find((x) => m['kind'] === 'NodePool' && x.name === meta);
    return `${pool ? `${comment([`NodePool ${pool.name}:`, ...pool.why.map((w) => `  ${w}`)])}\n` : ''}${stringify(m, { lineWidth: 0 })}`;
  });
  return `${head}\n${docs.map((d) => `---\n${d}`).join('')}`;
}
