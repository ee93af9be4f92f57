// The Topology constructor's per-pods-array memo: running pods' required anti-affinity and namespaces are
// read once per pods array, and a node whose pods changed (a new array) is read afresh.
import { describe, expect, it } from 'vitest';
import { pod } from '../../test/fixtures/builders.ts';
import type { Pod } from '../domain/types.ts';
import { HOSTNAME_LABEL } from '../scheduling/labels.ts';
import { Topology, type TopologyNode } from './topology.ts';

const anti = (name: string, app: string): Pod =>
  pod({
    name,
    nodeName: 'n1',
    labels: { app },
    affinity: {
      podAntiAffinity: { required: [{ topologyKey: HOSTNAME_LABEL, labelSelector: { matchLabels: { app } } }] },
    },
  });

const topo = (nodes: readonly TopologyNode[], pending: readonly Pod[] = []) =>
  new Topology({ nodePools: [], instanceTypes: new Map(), nodes, pending, policy: 'Respect' });

const counts = (t: Topology) => [...t.inverse.values()].map((g) => [...g.domains.entries()]).sort();

describe('Topology over running pods', () => {
  it('counts the required anti-affinity of the pods a node has now, not of an earlier pods array', () => {
    const node = (pods: readonly Pod[]): TopologyNode => ({
      name: 'n1',
      labels: { [HOSTNAME_LABEL]: 'n1' },
      taints: [],
      pods,
    });
    const first = [pod({ name: 'plain', nodeName: 'n1' }), anti('a', 'web')];
    expect(counts(topo([node(first)]))).toEqual([[['n1', 1]]]);
    // The same array again: the same answer (served from the memo).
    expect(counts(topo([node(first)]))).toEqual([[['n1', 1]]]);
    // Same node name, new pods: the memo must not answer for it.
    expect(counts(topo([node([pod({ name: 'plain', nodeName: 'n1' })])]))).toEqual([]);
    expect(counts(topo([node([anti('a', 'web'), anti('b', 'db')])]))).toEqual([[['n1', 1]], [['n1', 1]]]);
  });

  it('leaves out running pods that are being scheduled again (moved by a disruption simulation)', () => {
    const pods = [anti('a', 'web')];
    const n: TopologyNode = { name: 'n1', labels: { [HOSTNAME_LABEL]: 'n1' }, taints: [], pods };
    expect(counts(topo([n]))).toEqual([[['n1', 1]]]);
    // Pending again: it owns its inverse group but is not counted where it ran.
    expect(counts(topo([n], [pods[0]!]))).toEqual([[['n1', 0]]]);
  });
});
