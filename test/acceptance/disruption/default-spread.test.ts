// Default topology spread in consolidation (designs/default-topology-spread-awareness.md, "Interaction with
// Existing Features": the defaults apply to the consolidation simulation too, or consolidation would re-pack
// pods into a distribution the scheduler refuses). Two nodes in two zones hold one pod of one ReplicaSet each.
import { beforeEach, describe, expect, it } from 'vitest';
import { ownerKey, type SelectorSources, type TopologySpreadConstraint } from '../../../engine/domain/types.ts';
import { pod, resetIds } from '../../fixtures/builders.ts';
import { leastExpensiveInstance } from '../../fixtures/instancetypes.ts';
import { bigNode, env, OPTIONS, reconcile, types } from './harness.ts';

beforeEach(() => resetIds());

const ZONE = 'topology.kubernetes.io/zone';
const labels = { app: 'web' };
const zoneDefault: TopologySpreadConstraint = { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule' };
const sources: SelectorSources = {
  services: [],
  owners: new Map([[ownerKey('ReplicaSet', 'default', 'web'), { matchLabels: labels }]]),
};
const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', controller: true };

function twoZones(defaults: readonly TopologySpreadConstraint[]) {
  const cheap = leastExpensiveInstance(types());
  const node = (name: string, zone: string) =>
    bigNode({ it: cheap, name, labels: { [ZONE]: zone }, pods: [pod({ labels, owner, nodeName: name })] });
  return env({
    nodes: [node('a', 'test-zone-1'), node('b', 'test-zone-2')],
    options: { ...OPTIONS, ...(defaults.length ? { defaultTopologySpreadConstraints: defaults } : {}) },
    selectorSources: sources,
  });
}

describe('default topology spread in consolidation', () => {
  it('deletes one of the two nodes when nothing spreads the pods', async () => {
    const r = await reconcile(twoZones([]));
    expect(r.decision).toMatchObject({ kind: 'delete' });
  });
  it('keeps both when the default zone spread would be broken by moving a pod', async () => {
    const r = await reconcile(twoZones([zoneDefault]));
    expect(r.decision.kind).toBe('noop');
  });
});
