// The starting state of an existing node is cached per node object and daemonset list (places.ts nodeStart), and a
// node's active pods per pods array (scheduling.ts): these tests fail when a key is too coarse or a solve's changes leak.
import { describe, expect, it } from 'vitest';
import { daemonSet, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { provisionInput } from './input.ts';
import { reschedulablePods } from '../disruption/pods.ts';
import { ExistingNode } from './places.ts';
import { solveReference } from '../solver/reference/scheduler.ts';
import { ModelCaches } from './caches.ts';

const node = (o: Parameters<typeof stateNode>[0] = {}) =>
  stateNode({ allocatable: { cpu: '4', memory: '4Gi', pods: '10' }, ...o });

describe('existing node preparation', () => {
  const caches = new ModelCaches();
  it('starts every solve from the node as it is, whatever an earlier solve placed on it', () => {
    const n = node({ name: 'a', pods: [pod({ cpu: '1', hostPorts: [80] })] });
    const first = new ExistingNode(n, [], caches);
    expect(first.remaining['cpu']).toBe(3000);
    first.add(pod({ cpu: '2', hostPorts: [81] }), first.requirements);
    expect(first.remaining['cpu']).toBe(1000);
    const second = new ExistingNode(n, [], caches);
    expect(second.remaining['cpu']).toBe(3000);
    expect(second.hostPorts.map((p) => p.port)).toEqual([80]);
  });

  it('shares the requirements of labels nodes have alike, and gives each node its own hostname', () => {
    const own = new ModelCaches();
    const a = new ExistingNode(node({ name: 'a', zone: 'z1' }), [], own);
    const b = new ExistingNode(node({ name: 'b', zone: 'z1' }), [], own);
    const c = new ExistingNode(node({ name: 'c', zone: 'z2' }), [], own);
    const zone = 'topology.kubernetes.io/zone';
    expect(b.requirements.get(zone)).toBe(a.requirements.get(zone));
    expect([...c.requirements.get(zone)!.values]).toEqual(['z2']);
    expect([...a.requirements.get('kubernetes.io/hostname')!.values]).toEqual(['a']);
    expect([...b.requirements.get('kubernetes.io/hostname')!.values]).toEqual(['b']);
    // The same requirements as a node prepared without caches.
    const alone = new ExistingNode(node({ name: 'b', zone: 'z1' }), []);
    expect(b.requirements).toEqual(alone.requirements);
  });

  it('is keyed on the node object and the daemonset list, not on the name', () => {
    const n = node({ name: 'a', pods: [pod({ cpu: '1' })] });
    expect(new ExistingNode(n, [], caches).remaining['cpu']).toBe(3000);
    // the same name with other pods (a later snapshot): its own state
    expect(new ExistingNode({ ...n, pods: [] }, [], caches).remaining['cpu']).toBe(4000);
    // the same node with a daemonset still to come: its pod's requests are held back
    expect(new ExistingNode(n, [daemonSet('agent', { cpu: '500m' })], caches).remaining['cpu']).toBe(2500);
    expect(new ExistingNode(n, [], caches).remaining['cpu']).toBe(3000);
  });

  it('counts topology over the pods array the node carries now', () => {
    const anti = {
      podAntiAffinity: {
        required: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'x' } } }],
      },
    };
    const blocker = pod({ cpu: '100m', labels: { app: 'x' } });
    const busy = node({ name: 'a', pods: [blocker] });
    const pending = pod({ cpu: '100m', affinity: anti });
    const s = snapshot({ nodes: [busy] });
    const on = (plan: ReturnType<typeof solveReference>) => [...plan.existing.values()].flat();
    expect(on(solveReference(provisionInput(s, [pending], { caches })))).toEqual([]);
    // the same node name, now without the selected pod: the pending pod may land there
    const freed = snapshot({ nodes: [{ ...busy, pods: [] }] });
    expect(on(solveReference(provisionInput(freed, [pending], { caches })))).toEqual([pending.uid]);
  });

  it('keeps the reschedulable pods of each pods array apart', () => {
    const n = node({ name: 'a', pods: [pod({ cpu: '1' }), pod({ cpu: '1', phase: 'Succeeded' })] });
    expect(reschedulablePods(n, caches)).toHaveLength(1);
    expect(reschedulablePods({ ...n, pods: [] }, caches)).toHaveLength(0);
    expect(reschedulablePods({ ...n, pods: [...n.pods, pod({ cpu: '1', nodeName: 'a' })] }, caches)).toHaveLength(2);
  });
});
