// Every metric family of Karpenter's metrics reference exists here with the same type and label names, or
// docs/controller.md lists it as not applicable with the reason (test/fixtures/karpenter/metrics.json holds
// Karpenter's families as facts, with their sources).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Metrics } from './metrics.ts';

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
