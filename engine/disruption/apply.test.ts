// applyCommand's new objects: launched nodes' pods are the pending pods bound, and they share one hidden class.
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { nodePool, pods, snapshot } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { provisionInput } from '../model/input.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { launchedNode } from './apply.ts';

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
