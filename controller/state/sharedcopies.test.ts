import { describe, expect, it } from 'vitest';
import { SharedCopies } from './sharedcopies.ts';

describe('SharedCopies', () => {
  it('gives the first value kept under a key to every later holder of an equal one', () => {
    const copies = new SharedCopies<{ app: string }>(10);
    const first = { app: 'web' };
    expect(copies.keep('web', first)).toBe(first);
    expect(copies.keep('web', { app: 'web' })).toBe(first);
    expect(copies.get('web')).toBe(first);
    expect(copies.get('db')).toBeUndefined();
  });

  it('starts afresh once it holds max keys, keeping the value that came then', () => {
    const copies = new SharedCopies<string[]>(2);
    const a = ['a'];
    copies.keep('a', a);
    copies.keep('b', ['b']);
    const c = ['c'];
    expect(copies.keep('c', c)).toBe(c);
    expect(copies.get('a')).toBeUndefined();
    expect(copies.get('c')).toBe(c);
    const a2 = ['a'];
    expect(copies.keep('a', a2)).toBe(a2);
  });
});
