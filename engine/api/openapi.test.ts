import { describe, expect, it } from 'vitest';
import { applyDefaults, validateSchema } from './openapi.ts';
import type { Schema } from './schemas/types.ts';

const ctx = { object: 'Thing/x' };

const schema: Schema = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string', maxLength: 3 }, size: { type: 'integer', default: 1 } },
      },
    },
    labels: { type: 'object', additionalProperties: { type: 'string', minLength: 2 } },
    mode: { type: 'string', default: 'fast' },
  },
};

describe('the schema walk', () => {
  it('names each error at its own path, however deep and in whatever order the walk met it', () => {
    const errors = validateSchema(
      schema,
      { items: [{ name: 'ok' }, { name: 'toolong' }, {}], labels: { a: 'b', c: 'dd' }, extra: 1 },
      ['spec'],
      ctx,
    );
    expect(errors.map((e) => [e.path, e.message])).toEqual([
      ['spec.items[1].name', '"toolong" is 7 characters long; at most 3 are allowed'],
      ['spec.items[2].name', 'is required but missing'],
      ['spec.labels[a]', 'must be at least 2 characters long'],
      ['spec.extra', 'unknown field "extra"'],
    ]);
    // Each error holds its own segments: later steps of the walk did not change them.
    expect(errors[0]!.segments).toEqual(['spec', 'items', 1, 'name']);
    expect(errors[2]!.segments).toEqual(['spec', 'labels', { key: 'a' }]);
    expect(errors[0]!.segments).not.toBe(errors[1]!.segments);
  });

  it('counts a string in code points, as the API server does: a pair of surrogates is one', () => {
    const s: Schema = { type: 'string', maxLength: 3 };
    expect(validateSchema(s, '\u{1F600}\u{1F600}\u{1F600}', [], ctx)).toEqual([]);
    expect(validateSchema(s, 'ab\u{1F600}x', [], ctx).map((e) => e.message)).toEqual([
      '"ab\u{1F600}x" is 4 characters long; at most 3 are allowed',
    ]);
    // A lone surrogate counts as one, as `[...text]` counts it.
    expect(validateSchema(s, 'ab\ud800', [], ctx)).toEqual([]);
    expect(validateSchema(s, 'ab\ud800\ud800', [], ctx)).toHaveLength(1);
  });

  it('fills defaults in each object and leaves the input as it was', () => {
    const input = { items: [{ name: 'a' }, { name: 'b', size: 4 }] };
    const copy = structuredClone(input);
    expect(applyDefaults(schema, input)).toEqual({
      items: [
        { name: 'a', size: 1 },
        { name: 'b', size: 4 },
      ],
      mode: 'fast',
    });
    expect(input).toEqual(copy);
  });
});
