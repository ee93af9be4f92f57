// The node table (nodetable.ts) must never change a block: a run of solves over one node list, each with other
// nodes marked for deletion (as a disruption call's simulations), encodes byte-identical blocks with the table
// kept across the run and without a table at all; and a list the table does not fit gets a table of its own.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeProvision } from '../abi/encode.ts';
import type { Pod, StateNode } from '../domain/types.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { pod, pods, stateNode } from '../../test/fixtures/builders.ts';
import { problemArb } from '../../test/solver/arbitraries.ts';
import { ModelCaches } from './caches.ts';
import { nodeTable } from './nodetable.ts';
import type { ProvisionInput } from './types.ts';

const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);

function block(input: ProvisionInput, caches: ModelCaches, table: boolean): Buffer {
  return Buffer.from(encodeProvision({ ...input, caches }, { improve: false, nodeTable: table }).block);
}

describe('the node table', () => {
  it('encodes the blocks a solve without it encodes, over solves marking other nodes of one list', () => {
    fc.assert(
      fc.property(
        problemArb,
        fc.array(fc.array(fc.boolean(), { maxLength: 12 }), { minLength: 1, maxLength: 4 }),
        (p, marks) => {
          const caches = new ModelCaches();
          const marked = new Map<StateNode, StateNode>();
          const copy = (n: StateNode) => {
            let m = marked.get(n);
            if (!m) marked.set(n, (m = { ...n, markedForDeletion: true }));
            return m;
          };
          for (const mark of [[], ...marks]) {
            const nodes = p.nodes.map((n, i) => (mark[i] ? copy(n) : n));
            const input: ProvisionInput = { ...p, nodes, wellKnownLabels };
            expect(block(input, caches, true).equals(block(input, new ModelCaches(), false))).toBe(true);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("is not kept for a caller's array that changed in place since the last solve (a node added or replaced)", () => {
    fc.assert(
      fc.property(problemArb, fc.nat(), (p, k) => {
        if (!p.nodes.length) return;
        const caches = new ModelCaches();
        // The caller's own array, solved empty first and then grown and changed in place, as a harness does.
        const nodes: StateNode[] = [];
        const solve = () => {
          const input: ProvisionInput = { ...p, nodes, wellKnownLabels };
          expect(block(input, caches, true).equals(block(input, new ModelCaches(), false))).toBe(true);
        };
        solve();
        for (const n of p.nodes) {
          nodes.push(n);
          solve();
        }
        const i = k % nodes.length;
        nodes[i] = { ...nodes[i]!, pods: nodes[i]!.pods.slice(1) };
        solve();
      }),
      { numRuns: 60 },
    );
  });

  it('is kept for a list of the same nodes or their marked copies, and made anew for any other', () => {
    fc.assert(
      fc.property(problemArb, (p) => {
        if (!p.nodes.length) return;
        const caches = new ModelCaches();
        const t = nodeTable(p.nodes, p.daemonSets, caches);
        const marked = p.nodes.map((n, i) => (i % 2 ? { ...n, markedForDeletion: true } : n));
        expect(nodeTable(marked, p.daemonSets, caches)).toBe(t);
        expect(nodeTable(p.nodes, p.daemonSets, caches)).toBe(t);
        // Another node in a place (its pods changed), one node fewer, another daemonset list: not the same table.
        const changed = p.nodes.map((n, i) => (i === 0 ? { ...n, pods: [...n.pods] } : n));
        expect(nodeTable(changed, p.daemonSets, caches)).not.toBe(t);
        expect(nodeTable(p.nodes.slice(1), p.daemonSets, caches).nodes).toHaveLength(p.nodes.length - 1);
        expect(nodeTable(p.nodes, [...p.daemonSets], caches).daemonSets).not.toBe(p.daemonSets);
      }),
      { numRuns: 60 },
    );
  });

  it("gives topology a node's own pod array when all its pods are active, else the active ones", () => {
    const running = pods(3, { cpu: '1' });
    const done: Pod = { ...pod({ name: 'done' }), phase: 'Succeeded' };
    const leaving: Pod = { ...pod({ name: 'leaving' }), deletionTimestamp: 1 };
    const all = stateNode({ name: 'all', pods: running });
    const some = stateNode({ name: 'some', pods: [done, ...running, leaving] });
    const t = nodeTable([all, some], [], new ModelCaches());
    expect(t.topologyNodes[0]!.pods).toBe(all.pods);
    expect(t.topologyNodes[1]!.pods.map((p) => p.name)).toEqual(running.map((p) => p.name));
  });
});
