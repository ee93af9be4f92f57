// Every metric family of Karpenter's metrics reference exists here with the same type and label names, or
// docs/controller.md lists it as not applicable with the reason (test/fixtures/karpenter/metrics.json holds
// Karpenter's families as facts, with their sources).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Gauge, Registry } from 'prom-client';
import { turnsDuring } from '../../test/support/turns.ts';
import { Metrics, type DerivedSeries } from './metrics.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
interface Family {
  name: string;
  type: string;
  labels: string[];
}
const reference = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/karpenter/metrics.json'), 'utf8')) as {
  families: Family[];
};

/** Names in the "Not applicable" metrics table of docs/controller.md, with their reasons. */
function notApplicable(): Map<string, string> {
  const doc = readFileSync(join(ROOT, 'docs/controller.md'), 'utf8');
  const section = doc.split(/^### Metrics that do not apply/m)[1]?.split(/^#/m)[0] ?? '';
  const out = new Map<string, string>();
  for (const line of section.split('\n')) {
    const m = /^\| `([a-z_]+)` \| (.+) \|$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!.trim());
  }
  return out;
}

describe("Karpenter's metrics reference", () => {
  const metrics = new Metrics();
  const na = notApplicable();

  it("the fixture lists the reference's families", () => {
    expect(reference.families.length).toBeGreaterThanOrEqual(126);
    expect(new Set(reference.families.map((f) => f.name)).size).toBe(reference.families.length);
  });

  for (const f of reference.families) {
    it(`${f.name} is a ${f.type} labelled [${f.labels.join(', ')}]${na.has(f.name) ? ' (documented as not applicable)' : ''}`, async () => {
      const m = metrics.registry.getSingleMetric(f.name);
      if (na.has(f.name)) {
        expect(na.get(f.name)!.length).toBeGreaterThan(20);
        expect(m).toBeUndefined();
        return;
      }
      expect(m, `no metric ${f.name}`).toBeDefined();
      expect(String((await m!.get()).type)).toBe(f.type);
      expect([...(m as unknown as { labelNames: string[] }).labelNames].sort()).toEqual([...f.labels].sort());
    });
  }

  it('documents only families of the reference as not applicable', () => {
    const names = new Set(reference.families.map((f) => f.name));
    expect([...na.keys()].filter((n) => !names.has(n))).toEqual([]);
  });

  it("answers the dashboards' quantile queries from summaries with Karpenter's objectives", async () => {
    metrics.podStartupDuration.observe(3);
    metrics.nodeTerminationDuration.observe({ nodepool: 'default' }, 40);
    const text = await metrics.text();
    for (const q of ['0', '0.5', '0.9', '0.99', '1']) {
      expect(text).toContain(`karpenter_pods_startup_duration_seconds{quantile="${q}"} 3`);
      expect(text).toContain(`karpenter_nodes_termination_duration_seconds{quantile="${q}",nodepool="default"} 40`);
    }
  });
});

describe('a gauge derived at each scrape', () => {
  /** Pod-state series: odd label values (quotes, backslashes, newlines) and odd values; 2,500, so several slices. */
  function series(): Array<[Record<string, string>, number]> {
    const odd = ['a"b', 'c\\d', 'e\nf', '', 'plain'];
    const values = [1, 0, 0.1 + 0.2, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -3e-9, 1e21];
    return Array.from({ length: 2_500 }, (_, i) => [
      { name: `pod-${i}`, namespace: odd[i % odd.length]!, phase: 'Running', node: odd[(i * 7) % odd.length]! },
      values[i % values.length]!,
    ]);
  }

  it('is written line for line as prom-client writes a gauge holding the same series, labels shared or not', async () => {
    const metrics = new Metrics();
    // Every other series shares its namespace and node as one object (as a node's series share its labels),
    // which come first in its line: the reference gauge is given its labels in that order.
    const all = series().map(([labels, v], i): DerivedSeries => {
      const { namespace, node, ...own } = labels;
      return i % 2 ? [labels, v] : [own, v, { namespace, node }];
    });
    metrics.podsState.derive(() => all);
    const reference = new Registry();
    const labelNames = (metrics.podsState as unknown as { labelNames: string[] }).labelNames;
    const help = (metrics.podsState as unknown as { help: string }).help;
    const g = new Gauge({ name: 'karpenter_pods_state', help, labelNames, registers: [reference] });
    for (const [labels, v, shared] of all) g.set({ ...shared, ...labels }, v);
    const want = await reference.getSingleMetricAsString('karpenter_pods_state');
    const text = await metrics.text();
    const start = text.indexOf('# HELP karpenter_pods_state ');
    const family = text.slice(start, text.indexOf('\n\n', start));
    expect(family.split('\n').sort()).toEqual(want.split('\n').sort());
    expect(family.split('\n')).toHaveLength(2 + all.length);
    // The whole text is still prom-client's: families apart by a blank line, one newline at the end.
    expect(text.endsWith('\n') && !text.endsWith('\n\n')).toBe(true);
    const sum = all.filter(([l, , sh]) => (sh ?? l).namespace === 'c\\d').reduce((s, [, v]) => s + v, 0);
    expect(await metrics.value('karpenter_pods_state', { namespace: 'c\\d' })).toBe(sum);
  });

  it('lets the event loop turn while a scrape writes its series', async () => {
    const metrics = new Metrics();
    const all = series();
    metrics.podsState.derive(() => all.map(([l, v]) => [l, v] as const));
    const turns = await turnsDuring(() => metrics.text());
    // 2,500 series are three slices: the ticker ran between them, not only once the text was done.
    expect(turns).toBeGreaterThanOrEqual(2);
  });

  it('writes the whole registry as prom-client does when nothing is derived', async () => {
    const metrics = new Metrics();
    metrics.nodeClaimsCreated.inc({ reason: 'provisioned', nodepool: 'a"\\\n', min_values_relaxed: 'false' });
    const derived = new Set([
      'karpenter_pods_state',
      ...(await metrics.text())
        .split('\n')
        .flatMap(
          (l) =>
            /^# TYPE (karpenter_(nodes_(allocatable|system_overhead|total_\w+|current_lifetime_seconds)|cluster_utilization_percent)) /.exec(
              l,
            )?.[1] ?? [],
        ),
    ]);
    expect(derived.size).toBe(9);
    // Without sources the derived families are a header alone, as prom-client writes a gauge with no series.
    expect(await metrics.text()).toBe(await metrics.registry.metrics());
  });

  it('writes families prom-client holds as its Registry does, a slice at a time: gauges, counters, histograms, summaries', async () => {
    const metrics = new Metrics();
    // Thousands of series in plain families (a series per pending pod, per offering), labels that need escaping,
    // histogram buckets (their series' labels come as shared labels), a summary, values that are not finite.
    for (let i = 0; i < 3_000; i++) {
      const ident = { name: `p-${i}`, namespace: i % 7 ? 'default' : 'we"ird\\ns\n' };
      metrics.podUnboundTime.set(ident, i / 3);
      metrics.podUnstartedTime.set(ident, i % 11 ? i : Number.POSITIVE_INFINITY);
    }
    for (let i = 0; i < 500; i++)
      metrics.offeringPrice.set({ instance_type: `t${i}.large`, capacity_type: 'spot', zone: `z-${i % 3}` }, i * 0.01);
    metrics.nodeClaimsCreated.inc({ reason: 'provisioned', nodepool: 'a"\\\n', min_values_relaxed: 'false' });
    for (const c of ['provisioner', 'disruption']) metrics.schedulingDuration.observe({ controller: c }, 0.3);
    metrics.podStartupDuration.observe(12);
    const want = await metrics.registry.metrics();
    expect(want.split('\n').length).toBeGreaterThan(6_500);
    expect(await metrics.text()).toBe(want);
  });

  it('lets the event loop turn while a scrape writes a large family prom-client holds', async () => {
    const metrics = new Metrics();
    for (let i = 0; i < 5_000; i++) metrics.podUnboundTime.set({ name: `p-${i}`, namespace: 'default' }, i);
    const at: number[] = [];
    let lines = 0;
    await turnsDuring(
      async () => {
        for await (const piece of metrics.exposition()) lines += piece.split('\n').length - 1;
      },
      () => at.push(lines),
    );
    // 5,000 series of 2 labels are three slices or more: the ticker ran while the family was being written.
    const during = at.filter((n) => n > 0 && n < lines);
    expect(new Set(during).size).toBeGreaterThanOrEqual(2);
  });
});
