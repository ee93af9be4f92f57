// The controller's log lines have Karpenter's shape, so log queries and alerts written for Karpenter match:
// for the same events (provisioning, launch, registration, disruption, interruption, termination) our lines
// carry exactly the keys Karpenter's do (test/fixtures/karpenter/log-keys.json, taken from its source), with
// its level names and object references.
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

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/karpenter/log-keys.json');
const reference = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
  messages: Record<string, { event: string; controller: string; keys: string[] }>;
};

type Line = Record<string, unknown>;

describe("log lines in Karpenter's shape", () => {
  let sim: Simulation;
  const lines: Line[] = [];

  beforeAll(async () => {
    sim = await simulation({
      logLevel: 'info',
      logDestination: { write: (s: string) => void lines.push(JSON.parse(s) as Line) },
    });
    await sim.apply(guide('guide-07.yaml').replace('consolidateAfter: 2m', 'consolidateAfter: 30s'));
    await sim.apply(deployment('web', 10));
    await sim.clock.advanceUntil(() => running(sim, 'web') === 10, 180_000, 'web running');
    // Disruption and termination: consolidation replaces the big node.
    await scale(sim, 'web', 2);
    const first = nodeClaims(sim)[0]!.metadata.name;
    await sim.clock.advanceUntil(
      () => nodeClaims(sim).every((c) => c.metadata.name !== first) && nodes(sim).length === 1,
      15 * 60_000,
      'consolidated',
    );
    // Interruption: the remaining node gets an instance-stopping message.
    const pid = (nodeClaims(sim)[0]!.status as { providerID: string }).providerID;
    sim.provider.interrupt(pid, 'stateChange', { state: 'stopping' });
    await sim.clock.advanceUntil(
      () => lines.some((l) => l['message'] === 'initiating delete from interruption message'),
      120_000,
      'interruption handled',
    );
    await sim.clock.advance(60_000);
  }, 120_000);

  afterAll(async () => {
    await sim?.close();
  });

  it("writes every line with Karpenter's level names, logger and commit", () => {
    expect(lines.length).toBeGreaterThan(20);
    for (const l of lines) {
      expect(['DEBUG', 'INFO', 'WARN', 'ERROR']).toContain(l['level']);
      expect(l['logger']).toBe('controller');
      expect(typeof l['commit']).toBe('string');
      expect(String(l['time'])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  for (const [message, want] of Object.entries(reference.messages)) {
    it(`${want.event}: "${message}" has Karpenter's keys`, () => {
      const ours = lines.filter((l) => l['message'] === message);
      expect(ours.length, `no "${message}" line`).toBeGreaterThan(0);
      // Keys that hold a value only when there is one (the Node of a NodeClaim not yet registered) may be absent.
      const line = ours.find((l) => want.keys.every((k) => k in l)) ?? ours[0]!;
      expect(Object.keys(line).sort()).toEqual([...want.keys].sort());
    });
  }

  it('writes object references as Karpenter does', () => {
    const launched = lines.find((l) => l['message'] === 'launched nodeclaim')!;
    expect(launched['NodeClaim']).toEqual({ name: launched['name'] });
    expect(launched).toMatchObject({
      controller: 'nodeclaim.lifecycle',
      controllerGroup: 'karpenter.sh',
      controllerKind: 'NodeClaim',
      namespace: '',
    });
    expect(String(launched['provider-id'])).toMatch(/^aws:\/\/\//);
    const created = lines.find((l) => l['message'] === 'created nodeclaim')!;
    expect(created['NodePool']).toEqual({ name: 'production' });
    expect(Object.keys(created['requests'] as object)).toContain('cpu');
    expect(created['instance-types']).toMatch(
      /^[a-z0-9-]+\.[a-z0-9]+(, [a-z0-9-]+\.[a-z0-9]+)*( and \d+ other\(s\))?$/,
    );
  });
});
