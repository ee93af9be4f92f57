import { describe, expect, it } from 'vitest';
import { parseFieldSelector } from './selectors.ts';
import { Store } from './store.ts';
import type { KObject } from './types.ts';

const pod = (name: string, nodeName?: string, phase = 'Pending'): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: nodeName ? { nodeName } : {},
  status: { phase },
});

const names = (xs: readonly KObject[]): string[] => xs.map((o) => o.metadata.name!).sort();

/** What a list must answer: every pod the selector matches, found by reading them all. */
const scan = (s: Store, selector: string): string[] =>
  names(s.list('pods').filter((p) => s.selects(p, { fields: parseFieldSelector(selector) })));

describe('Store pods by spec.nodeName', () => {
  it('lists one node`s pods as a scan of every pod would, through binding, status writes and deletion', () => {
    const s = new Store();
    for (let i = 0; i < 6; i++) s.put('pods', pod(`p${i}`));
    s.put('pods', pod('p0', 'n1'));
    s.put('pods', pod('p1', 'n1'));
    s.put('pods', pod('p2', 'n2'));
    s.put('pods', pod('p1', 'n1', 'Running'));
    s.remove('pods', 'default', 'p0');
    const selectors = [
      'spec.nodeName=n1',
      'spec.nodeName=n2',
      'spec.nodeName=n3',
      'spec.nodeName=',
      'spec.nodeName=n1,status.phase=Running',
      'spec.nodeName=n1,status.phase=Pending',
      'spec.nodeName!=n1',
    ];
    for (const sel of selectors)
      expect(names(s.list('pods', { fields: parseFieldSelector(sel) })), sel).toEqual(scan(s, sel));
    expect(names(s.list('pods', { fields: parseFieldSelector('spec.nodeName=n1') }))).toEqual(['p1']);
  });

  it('keeps a pod in its node`s list while it stays there, and namespaces apart', () => {
    const s = new Store();
    s.put('pods', pod('a', 'n1'));
    s.put('pods', pod('b', 'n1'));
    s.put('pods', pod('a', 'n1', 'Running'));
    s.put('pods', { ...pod('a', 'n1'), metadata: { name: 'a', namespace: 'other', uid: 'uid-other-a' } });
    const onN1 = s.list('pods', { fields: parseFieldSelector('spec.nodeName=n1') });
    expect(onN1.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).toEqual([
      'default/a',
      'default/b',
      'other/a',
    ]);
    expect((onN1[0]!.status as { phase: string }).phase).toBe('Running');
    expect(s.list('pods', { namespace: 'other', fields: parseFieldSelector('spec.nodeName=n1') })).toHaveLength(1);
  });
});
