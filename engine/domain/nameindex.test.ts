import { describe, expect, it } from 'vitest';
import { NameIndex } from './nameindex.ts';

/** The index's own map, to see how a key's names are held. */
const held = (ix: NameIndex, key: string): unknown => (ix as unknown as { byKey: Map<string, unknown> }).byKey.get(key);

describe('NameIndex', () => {
  it('holds a key with one name as the name string itself, not a Set', () => {
    const ix = new NameIndex();
    const name = ['node', 'a'].join('-');
    ix.add('aws:///z/i-1', name);
    ix.add('aws:///z/i-1', name);
    expect(held(ix, 'aws:///z/i-1')).toBe(name);
    expect(ix.count('aws:///z/i-1')).toBe(1);
    expect(ix.only('aws:///z/i-1')).toBe(name);
    expect(ix.names('aws:///z/i-1')).toEqual([name]);
  });

  it('keeps several names in the order they came, and goes back to the string when one is left', () => {
    const ix = new NameIndex();
    ix.add('p', 'b');
    ix.add('p', 'a');
    ix.add('p', 'c');
    expect(held(ix, 'p')).toBeInstanceOf(Set);
    expect(ix.count('p')).toBe(3);
    expect(ix.only('p')).toBeUndefined();
    expect(ix.names('p')).toEqual(['b', 'a', 'c']);
    ix.drop('p', 'b');
    ix.drop('p', 'x');
    expect(ix.names('p')).toEqual(['a', 'c']);
    ix.drop('p', 'a');
    expect(held(ix, 'p')).toBe('c');
    expect(ix.only('p')).toBe('c');
    ix.drop('p', 'other');
    expect(ix.names('p')).toEqual(['c']);
    ix.drop('p', 'c');
    expect(held(ix, 'p')).toBeUndefined();
    expect(ix.count('p')).toBe(0);
    expect(ix.names('p')).toEqual([]);
  });
});
