// The cluster the model mirror's A/B scripts diff (mirror-nominate-ab.ts, mirror-touched-ab.ts): `count` nodes of 20
// pods each on the first fake instance type, and the other checkout's ModelMirror (BASE) beside this one's.
import type { Snapshot, StateNode } from '../../engine/index.ts';
import { ModelMirror } from '../../engine/cluster/delta.ts';
import { nodePool, pod, snapshot, stateNode } from '../fixtures/builders.ts';
import { defaultFakeInstanceTypes } from '../fixtures/instancetypes.ts';

/** This checkout's ModelMirror and the one of the checkout at BASE. */
export async function mirrorsToCompare(): Promise<{ base: ModelMirror; this: ModelMirror }> {
  const base = process.env['BASE'];
  if (!base) throw new Error('BASE: the path of the checkout to compare with');
  const theirs = (await import(`${base}/engine/cluster/delta.ts`)) as { ModelMirror: typeof ModelMirror };
  return { base: new theirs.ModelMirror(), this: new ModelMirror() };
}

/** `count` nodes of 20 running pods each, and a snapshot of any such node list at a time. */
export function mirrorCluster(count: number): {
  nodes: StateNode[];
  snap: (nodes: readonly StateNode[], now: number) => Snapshot;
} {
  const its = defaultFakeInstanceTypes();
  const pools = [nodePool()];
  const nodes = Array.from({ length: count }, (_, i) => {
    const name = `node-${i}`;
    const pods = Array.from({ length: 20 }, () => pod({ cpu: '100m', memory: '128Mi', nodeName: name }));
    return stateNode({ name, instanceType: its[0]!, zone: 'test-zone-1', capacityType: 'on-demand', pods });
  });
  return { nodes, snap: (list, now) => snapshot({ now, nodePools: pools, instanceTypes: its, nodes: [...list] }) };
}
