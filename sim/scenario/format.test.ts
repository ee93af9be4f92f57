import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseScenario, ScenarioError } from './format.ts';

const problems = (text: string): readonly string[] => {
  try {
    parseScenario(text, 'bad.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return (e as ScenarioError).problems;
  }
  throw new Error('expected the scenario to be refused');
};

describe('parseScenario', () => {
  it('reads the guide scenario', () => {
    const s = parseScenario(
      readFileSync(fileURLToPath(new URL('../../scenarios/guide-inflate.yaml', import.meta.url)), 'utf8'),
    );
    expect(s).toMatchObject({ name: 'guide-inflate', region: 'ap-northeast-2', clusterName: 'my-cluster', speed: 30 });
    expect(s.steps.slice(0, 9).map((x) => x.kind)).toEqual([
      'say',
      'apply',
      'apply',
      'say',
      'scale',
      'waitFor',
      'expect',
      'say',
      'scale',
    ]);
    expect(s.steps[4]).toEqual({ kind: 'scale', deployment: 'inflate', namespace: 'default', replicas: 10 });
    expect(s.steps[5]).toEqual({
      kind: 'waitFor',
      conditions: { runningPods: { op: '==', n: 10 }, selector: 'app=inflate' },
      timeoutMs: 300_000,
    });
    expect(s.steps[6]).toMatchObject({
      kind: 'expect',
      conditions: {
        onDemandNodes: { op: '>=', n: 1 },
        nodePoolNodes: { nodePool: 'production', count: { op: '>=', n: 1 } },
      },
    });
    expect(s.steps.filter((x) => x.kind === 'interrupt')).toEqual([
      { kind: 'interrupt', nodePool: 'spot-diverse', event: 'spotInterruption' },
    ]);
    expect(s.steps.find((x) => x.kind === 'waitFor' && x.conditions.driftedNodeClaims)).toMatchObject({
      conditions: { driftedNodeClaims: { op: '==', n: 3 } },
    });
  });

  it('reads every step kind', () => {
    const s = parseScenario(`name: all
steps:
  - apply: { yaml: "kind: Namespace" }
  - delete: { kind: NodePool, name: default }
  - wait: 90s
  - waitFor: { nodes: ">0" }
    timeout: 2m
  - ice: { capacityType: spot, zone: ap-northeast-2a }
  - clearIce
  - interrupt: { nodePool: default, event: scheduledChange }
  - table
  - expect: { events: { reason: FailedScheduling, message: limit } }
`);
    expect(s.steps).toEqual([
      { kind: 'apply', yaml: 'kind: Namespace' },
      { kind: 'delete', resource: 'NodePool', name: 'default' },
      { kind: 'wait', ms: 90_000 },
      { kind: 'waitFor', conditions: { nodes: { op: '>', n: 0 } }, timeoutMs: 120_000 },
      { kind: 'ice', zone: 'ap-northeast-2a', capacityType: 'spot' },
      { kind: 'clearIce' },
      { kind: 'interrupt', nodePool: 'default', event: 'scheduledChange' },
      { kind: 'table' },
      {
        kind: 'expect',
        conditions: { events: { reason: 'FailedScheduling', count: { op: '>=', n: 1 }, message: 'limit' } },
      },
    ]);
  });

  it('takes controller options by flag name and node conditions, checking both as the controller would', () => {
    const s = parseScenario(`name: repair
options:
  feature-gates: NodeRepair=true
  batch-idle-duration: 2s
steps:
  - nodeCondition: { nodePool: default, type: Ready, status: "False", reason: KubeletDown }
`);
    expect(s.options).toEqual({ 'feature-gates': 'NodeRepair=true', 'batch-idle-duration': '2s' });
    expect(s.steps).toEqual([
      { kind: 'nodeCondition', nodePool: 'default', type: 'Ready', status: 'False', reason: 'KubeletDown' },
    ]);
    expect(
      problems(`name: x
options: { feature-gates: Teleport=true, colour: blue }
steps:
  - nodeCondition: { type: Ready, status: false }
`),
    ).toEqual([
      'options.colour: is not a controller option (see karpenter-ts controller --help)',
      expect.stringContaining('options: --feature-gates: unknown feature gate "Teleport"'),
      'steps[0].nodeCondition.status: must be "True", "False" or "Unknown" (quoted, so YAML keeps it a string)',
    ]);
  });

  it('names every problem by its path', () => {
    expect(
      problems(`name: x
speed: -1
steps:
  - scale: { deployment: web, replicas: -2 }
  - waitFor: { nodes: "about 3" }
  - wait: soon
  - ice: { capacityType: reserved }
  - apply: a.yaml
    scale: { deployment: web, replicas: 1 }
  - teleport: {}
  - expect: {}
`),
    ).toEqual([
      'speed: must be a number > 0',
      'steps[0].scale.replicas: must be a whole number >= 0',
      'steps[1].waitFor.nodes: must be a count: a whole number, or a comparison such as ">=1" (got "about 3")',
      expect.stringMatching(/^steps\[2\]\.wait: must be a duration/),
      'steps[3].ice.capacityType: must be spot or on-demand',
      'steps[4]: has apply and scale; one step does one thing',
      expect.stringMatching(/^steps\[5\]: needs one of: apply, delete/),
      'steps[6].expect: names no condition',
    ]);
  });

  it('reads capacity reservations and names the bad fields of one', () => {
    const s = parseScenario(
      readFileSync(fileURLToPath(new URL('../../scenarios/capacity-reservation.yaml', import.meta.url)), 'utf8'),
    );
    expect(s.capacityReservations).toEqual([
      { id: 'cr-0123456789abcdef0', instanceType: 'm7i.large', zone: 'ap-northeast-2a', count: 1 },
    ]);
    expect(s.steps.find((x) => x.kind === 'expect')).toMatchObject({
      conditions: { reservedNodes: { op: '==', n: 1 } },
    });
    expect(
      problems(`name: x
capacityReservations:
  - { id: cr_1, instanceType: m5.large, zone: ap-northeast-2a, count: -1, reservationType: weekly }
  - { instanceType: m5.large, zone: ap-northeast-2a, count: 1, owner: me }
steps:
  - say: hi
`),
    ).toEqual([
      'capacityReservations[0].id: is not a capacity reservation id (cr-0123abcd...): "cr_1"',
      'capacityReservations[0].count: must be a whole number >= 0',
      'capacityReservations[0].reservationType: must be default or capacity-block',
      'capacityReservations[1].owner: unknown field (allowed: id, instanceType, zone, count, reservationType, instanceMatchCriteria, tags)',
      'capacityReservations[1].id: is required (a non-empty string)',
    ]);
  });

  it('reports YAML syntax errors with their line', () => {
    expect(problems('name: x\nsteps: [\n')[0]).toMatch(/^line \d+: /);
  });
});
