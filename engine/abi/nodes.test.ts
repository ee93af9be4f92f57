// Existing nodes' encoding parts, remembered per requirements object and per node.
import { describe, expect, it } from 'vitest';
import { stateNode } from '../../test/fixtures/builders.ts';
import { HOSTNAME_LABEL } from '../scheduling/labels.ts';
import { add, fromLabels, req } from '../scheduling/requirements.ts';
import { ModelCaches } from '../model/caches.ts';
import { nodeLabelSet, nodeTaintsKey, SharedLabelSets, taintsKey } from './nodes.ts';

describe('existing-node encoding parts', () => {
  it('drop the hostname and give equal keys exactly for equal label sets', () => {
    const a = fromLabels({ [HOSTNAME_LABEL]: 'a', zone: 'z1', type: 'm5.large' });
    const b = fromLabels({ [HOSTNAME_LABEL]: 'b', zone: 'z1', type: 'm5.large' });
    const c = fromLabels({ [HOSTNAME_LABEL]: 'c', zone: 'z2', type: 'm5.large' });
    expect(nodeLabelSet(a).set.has(HOSTNAME_LABEL)).toBe(false);
    expect(nodeLabelSet(a).key).toBe(nodeLabelSet(b).key);
    expect(nodeLabelSet(a).key).not.toBe(nodeLabelSet(c).key);
    const caches = new ModelCaches();
    expect(nodeLabelSet(a, caches)).toBe(nodeLabelSet(a, caches));
  });

  it('share one label set per distinct set, whether the requirements share their objects or not', () => {
    const zone = req('zone', false, ['z1']);
    const type = req('type', false, ['m5.large']);
    const host = (h: string) => req(HOSTNAME_LABEL, false, [h]);
    const sets = new SharedLabelSets(new ModelCaches());
    // The same requirement objects (the path a node of the same type and zone takes), other hostnames.
    const first = sets.of(add(new Map(), zone, type, host('a')));
    expect(first.has(HOSTNAME_LABEL)).toBe(false);
    expect([...first.keys()]).toEqual(['zone', 'type']);
    expect(sets.of(add(new Map(), zone, type, host('b')))).toBe(first);
    // Equal content in objects of their own: found by key, the same set.
    expect(sets.of(fromLabels({ zone: 'z1', type: 'm5.large', [HOSTNAME_LABEL]: 'c' }))).toBe(first);
    // Another zone, and a prefix of the first path: sets of their own.
    const other = sets.of(add(new Map(), req('zone', false, ['z2']), type, host('d')));
    expect(other).not.toBe(first);
    expect([...other.get('zone')!.values]).toEqual(['z2']);
    const prefix = sets.of(add(new Map(), zone, host('e')));
    expect(prefix).not.toBe(first);
    expect([...prefix.keys()]).toEqual(['zone']);
    expect(sets.of(add(new Map(), zone, type))).toBe(first);
  });

  it('key taints per node, order-independent, and apart for different taints', () => {
    const t1 = { key: 'a', value: '1', effect: 'NoSchedule' as const };
    const t2 = { key: 'b', effect: 'NoExecute' as const };
    const n1 = stateNode({ name: 'n1', taints: [t1, t2] });
    const n2 = stateNode({ name: 'n2', taints: [t2] });
    expect(nodeTaintsKey(n1, [t1, t2])).toBe(taintsKey([t2, t1]));
    expect(nodeTaintsKey(n2, [t2])).not.toBe(nodeTaintsKey(n1, [t1, t2]));
  });
});
