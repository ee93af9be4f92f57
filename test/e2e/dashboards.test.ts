// Karpenter's published Grafana dashboards (capacity and performance) work against karpenter-ts: after a
// simulated scale-up and a consolidation, /metrics exports every metric name they query
// (test/fixtures/karpenter/dashboards.json, read from the dashboards of karpenter-provider-aws v1.14.1),
// with the labels their panels filter and group by.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deployment,
  guide,
  nodeClaims,
  nodes,
  running,
  scale,
  simulation,
  type Simulation,
} from '../support/environment.ts';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/karpenter/dashboards.json');
const dashboards = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
  capacity: string[];
  performance: string[];
  external: string[];
};

/** A node agent, as every real cluster runs (the daemon series exist only on nodes with DaemonSet pods). */
const DAEMONSET = JSON.stringify({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'node-agent', namespace: 'kube-system' },
  spec: {
    selector: { matchLabels: { app: 'node-agent' } },
    template: {
      metadata: { labels: { app: 'node-agent' } },
      spec: {
        containers: [
          {
            name: 'agent',
            image: 'agent',
            resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          },
        ],
      },
    },
  },
});

/** The sample lines of one metric name (`name{...} value` or `name value`), without HELP/TYPE lines. */
const samples = (text: string, name: string): string[] =>
  text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe("Karpenter's Grafana dashboards", () => {
  let sim: Simulation;
  let text = '';

  beforeAll(async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml').replace('consolidateAfter: 2m', 'consolidateAfter: 30s'));
    await sim.apply(DAEMONSET);
    await sim.apply(deployment('web', 10));
    await sim.clock.advanceUntil(() => running(sim, 'web') === 10, 180_000, 'web running');
    const first = nodeClaims(sim)[0]!.metadata.name;
    await scale(sim, 'web', 2);
    await sim.clock.advanceUntil(
      () =>
        nodeClaims(sim).every((c) => c.metadata.name !== first) && nodes(sim).length === 1 && running(sim, 'web') === 2,
      15 * 60_000,
      'consolidated',
    );
    // Past the metrics controllers' periods (5 s nodes, 10 s NodePools).
    await sim.clock.advance(15_000);
    text = await sim.operator.metrics.text();
  }, 120_000);

  afterAll(async () => {
    await sim?.close();
  });

  it('the fixture names what the dashboards query', () => {
    expect(dashboards.capacity.length).toBeGreaterThan(10);
    expect(dashboards.performance.length).toBeGreaterThan(4);
  });

  for (const name of [...dashboards.capacity, ...dashboards.performance]) {
    it(`exports ${name}`, () => {
      expect(samples(text, name).length, `${name} has no samples`).toBeGreaterThan(0);
    });
  }

  it('labels node series as the capacity dashboard filters them', () => {
    const cpu = samples(text, 'karpenter_nodes_allocatable').filter((l) => l.includes('resource_type="cpu"'));
    expect(cpu).toHaveLength(1);
    for (const label of [
      'arch="amd64"',
      'capacity_type="on-demand"',
      'nodepool="production"',
      'instance_type="',
      'zone="ap-northeast-2',
    ])
      expect(cpu[0]).toContain(label);
    expect(samples(text, 'karpenter_nodes_total_pod_requests').some((l) => l.includes('resource_type="pods"'))).toBe(
      true,
    );
    expect(
      samples(text, 'karpenter_nodes_total_daemon_requests').find((l) => l.includes('resource_type="cpu"')),
    ).toMatch(/ 0\.1$/);
    expect(
      samples(text, 'karpenter_nodes_total_daemon_limits').find((l) => l.includes('resource_type="memory"')),
    ).toMatch(/ 268435456$/);
  });

  it('records the consolidation the dashboards chart', () => {
    expect(
      samples(text, 'karpenter_voluntary_disruption_decisions_total').some(
        (l) => l.includes('consolidation_type="single"') && !l.endsWith(' 0'),
      ),
    ).toBe(true);
    expect(
      samples(text, 'karpenter_nodeclaims_disrupted_total').some((l) => l.includes('reason="underutilized"')),
    ).toBe(true);
  });

  it('has reconcile histograms per controller and pod startup quantiles', () => {
    for (const c of ['provisioner', 'nodeclaim.lifecycle', 'disruption']) {
      expect(
        samples(text, 'controller_runtime_reconcile_time_seconds_count').some(
          (l) => l.includes(`controller="${c}"`) && !l.endsWith(' 0'),
        ),
      ).toBe(true);
    }
    expect(samples(text, 'karpenter_pods_startup_duration_seconds').filter((l) => l.includes('quantile=')).length).toBe(
      5,
    );
  });

  it("exports the operator's event-loop lag by quantile (this build's own)", () => {
    const lag = samples(text, 'karpenter_ts_event_loop_lag_seconds');
    expect(lag.map((l) => /quantile="([^"]+)"/.exec(l)?.[1]).sort()).toEqual(['0.5', '0.9', '0.99', '1']);
    for (const l of lag) expect(Number(l.split(' ').pop())).toBeGreaterThanOrEqual(0);
  });

  it('exports the cost metrics', () => {
    const cost = samples(text, 'karpenter_nodepools_cost_total').find((l) => l.includes('nodepool="production"'));
    expect(Number(cost?.split(' ').pop())).toBeGreaterThan(0);
    expect(
      samples(text, 'karpenter_cloudprovider_instance_type_offering_price_estimate').some(
        (l) => l.includes('instance_type="c6a.xlarge"') && l.includes('capacity_type="on-demand"'),
      ),
    ).toBe(true);
  });
});
