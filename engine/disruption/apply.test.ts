// applyCommand's new objects: launched nodes' pods are the pending pods bound, and they share one hidden class;
// launched nodes' labels, whole and in order, whether the commands are disrupt()'s own or came through msgpack.
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { fragmentedCluster } from '../../bench/suites/consolidation-scenarios.ts';
import { nodePool, pods, snapshot } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import type { Snapshot } from '../domain/types.ts';
import { provisionInput } from '../model/input.ts';
import { nodeClassLabel } from '../model/templates.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import { pack, unpack } from '../pool/codec.ts';
import {
  CAPACITY_TYPE_LABEL,
  HOSTNAME_LABEL,
  INITIALIZED_LABEL,
  INSTANCE_TYPE_LABEL,
  NODEPOOL_LABEL,
  REGISTERED_LABEL,
  withExtraWellKnown,
  ZONE_LABEL,
} from '../scheduling/labels.ts';
import { singleValueLabels } from '../scheduling/requirements.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { applyCommands, launchedNode } from './apply.ts';
import { disrupt } from './disrupt.ts';
import { claimRequirements, RESERVATION_ID_LABEL } from './pricing.ts';
import { INITIAL_LOOP_STATE, type Command } from './types.ts';

// V8 (Node 20) gives a spread copy that gains a field its source lacks a hidden class of its own; thousands of
// pods each with its own made every read of a pod field megamorphic (docs/engine.md). %HaveSameMap needs
// --allow-natives-syntax, which only enables that syntax in functions compiled after it is set.
v8.setFlagsFromString('--allow-natives-syntax');
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

describe('launchedNode', () => {
  it('binds the pending pods to the node, running, all with one hidden class', () => {
    const pending = pods(200, { cpu: '10m', memory: '16Mi' });
    const s = snapshot({ nodePools: [nodePool()], instanceTypes: defaultFakeInstanceTypes(), pendingPods: pending });
    const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
    const plan = new WasmSolver().solve(provisionInput(s, pending, { wellKnownLabels }));
    const claim = plan.newNodeClaims[0]!;
    // Launching binds the pods it is given (the claim's own, or a test's); the shapes are what is checked here.
    const mine = pending;
    const node = launchedNode(s, claim, 'launched-0', mine);
    expect(node?.pods).toHaveLength(mine.length);
    for (const [i, p] of node!.pods.entries()) {
      expect(p).toEqual({ ...mine[i], nodeName: 'launched-0', phase: 'Running', unschedulable: false });
      expect(Object.keys(p)).toEqual([...Object.keys(mine[i]!).filter((k) => k !== 'nodeName'), 'nodeName']);
      expect(sameMap(p, node!.pods[0]!)).toBe(true);
    }
    // The check itself tells hidden classes apart: spread copies that gain a field mostly have one each.
    const spread = mine.map((p) => ({ ...p, nodeName: 'launched-0' }));
    expect(spread.filter((p) => !sameMap(p, spread[0]!)).length).toBeGreaterThan(100);
  });
});

/** A launched node's labels spelt out: the claim's single-value requirements, its labels, the type's, then the launch's. */
function expectedLabels(s: Snapshot, claim: NewNodeClaimPlan, node: { name: string; labels: Record<string, string> }) {
  const pool = s.nodePools.find((p) => p.name === claim.nodePool)!;
  const it = s.instanceTypes.get(pool.name)!.find((t) => t.name === node.labels[INSTANCE_TYPE_LABEL])!;
  const [ncKey, ncVal] = nodeClassLabel(pool);
  const o = it.offerings.find(
    (x) => x.zone === node.labels[ZONE_LABEL] && x.capacityType === node.labels[CAPACITY_TYPE_LABEL],
  )!;
  return {
    ...singleValueLabels(claimRequirements(claim)),
    ...claim.labels,
    ...singleValueLabels(it.requirements),
    [ZONE_LABEL]: o.zone,
    [CAPACITY_TYPE_LABEL]: o.capacityType,
    ...(o.reservationId !== undefined ? { [RESERVATION_ID_LABEL]: o.reservationId } : {}),
    [NODEPOOL_LABEL]: pool.name,
    [ncKey]: ncVal,
    [HOSTNAME_LABEL]: node.name,
    [REGISTERED_LABEL]: 'true',
    [INITIALIZED_LABEL]: 'true',
  };
}

/** Six launches of one NodeClaim (one requirements array) where equally priced offerings span zones. */
function sixOfOne(): { s: Snapshot; cmd: Command } {
  const pending = pods(20, { cpu: '10m', memory: '16Mi' });
  const s = snapshot({ nodePools: [nodePool()], instanceTypes: defaultFakeInstanceTypes(), pendingPods: pending });
  const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
  const claim = new WasmSolver().solve(provisionInput(s, pending, { wellKnownLabels })).newNodeClaims[0]!;
  const cmd: Command = {
    kind: 'replace',
    reason: 'Underutilized',
    method: 'repack',
    candidates: [],
    replacements: Array.from({ length: 6 }, () => claim),
    savingsPerHour: 0,
    podsMoved: [],
    metricLabels: { decision: 'replace', reason: 'underutilized', consolidation_type: 'multi' },
  } as unknown as Command;
  return { s, cmd };
}

describe('applyCommands', async () => {
  it('labels launches of one NodeClaim by the zone each launch chose', () => {
    const { s, cmd } = sixOfOne();
    const names = [cmd.replacements.map((_, i) => `launched-${i}`)];
    for (const given of [[cmd], unpack<Command[]>(pack([cmd]))]) {
      const launched = applyCommands(s, given, names).nodes;
      expect(launched).toHaveLength(6);
      for (const n of launched) {
        expect(n.providerId).toBe(`replacement:///${n.labels[ZONE_LABEL]}/${n.name}`);
        const want = expectedLabels(s, cmd.replacements[0]!, n);
        expect(n.labels).toEqual(want);
        expect(Object.keys(n.labels)).toEqual(Object.keys(want));
      }
      // The launches spread over the zones (the check above can tell labels of one launch copied to another).
      expect(new Set(launched.map((n) => n.labels[ZONE_LABEL])).size).toBeGreaterThan(1);
    }
  });

  const solver = new WasmSolver();
  const { snapshot: start } = await fragmentedCluster(100, 20_261_129, solver);
  const opts = { repack: 'only', repackDeadlineMs: 30_000, state: INITIAL_LOOP_STATE, consolidationState: 0 } as const;
  const d = (await disrupt(start, { ...opts, solver })).decision;
  if (d.kind === 'noop') throw new Error('expected a repack decision');
  const commands: Command[] = [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])];
  const names = commands.map((c, k) => c.replacements.map((_, i) => `launched-${k}-${i}`));

  it("labels each launched node with its claim's, its type's and its launch's labels, in that order", () => {
    const after = applyCommands(start, commands, names);
    const claims = new Map(commands.flatMap((c, k) => c.replacements.map((r, i) => [names[k]![i]!, r] as const)));
    expect(claims.size).toBeGreaterThan(10);
    for (const n of after.nodes) {
      const claim = claims.get(n.name);
      if (!claim) continue;
      claims.delete(n.name);
      // The zone the launch chose, as the provider id records it (not read from the labels).
      expect(n.providerId).toBe(`replacement:///${n.labels[ZONE_LABEL]}/${n.name}`);
      const want = expectedLabels(start, claim, n);
      expect(n.labels).toEqual(want);
      expect(Object.keys(n.labels)).toEqual(Object.keys(want));
    }
    expect(claims.size).toBe(0);
  });

  it('carries commands that came through msgpack (sharing no arrays) out to the same cluster, byte for byte', () => {
    const wire = unpack<Command[]>(pack(commands));
    expect(wire[0]!.replacements[0]!.requirements).not.toBe(commands[0]!.replacements[0]!.requirements);
    const json = (s: Snapshot) => JSON.stringify(s.nodes);
    expect(json(applyCommands(start, wire, names))).toBe(json(applyCommands(start, commands, names)));
  });
});
