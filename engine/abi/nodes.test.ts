// Existing nodes' encoding parts, remembered per requirements object and per node.
import { describe, expect, it } from 'vitest';
import { stateNode } from '../../test/fixtures/builders.ts';
import { HOSTNAME_LABEL } from '../scheduling/labels.ts';
import { fromLabels } from '../scheduling/requirements.ts';
import { ModelCaches } from '../model/caches.ts';
import { nodeLabelSet, nodeTaintsKey, taintsKey } from './nodes.ts';

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

  it('key taints per node, order-independent, and apart for different taints', () => {
    const t1 = { key: 'a', value: '1', effect: 'NoSchedule' as const };
    const t2 = { key: 'b', effect: 'NoExecute' as const };
    const n1 = stateNode({ name: 'n1', taints: [t1, t2] });
    const n2 = stateNode({ name: 'n2', taints: [t2] });
    expect(nodeTaintsKey(n1, [t1, t2])).toBe(taintsKey([t2, t1]));
    expect(nodeTaintsKey(n2, [t2])).not.toBe(nodeTaintsKey(n1, [t1, t2]));
  });
});
