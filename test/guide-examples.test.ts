// examples/guide holds the guide's examples verbatim: every one must work unchanged, so nobody edits them.
// SHA256SUMS was written when they were copied from the guide; a change to any copy fails here.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUIDE_EXAMPLES_DIR } from './fixtures/guide.ts';

const sums = new Map(
  readFileSync(join(GUIDE_EXAMPLES_DIR, 'SHA256SUMS'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [sum, name] = line.split(/\s+\*?/);
      return [name!, sum!] as const;
    }),
);

describe('the guide examples shipped in examples/guide', () => {
  it('are the files SHA256SUMS lists, and no others', () => {
    const ours = readdirSync(GUIDE_EXAMPLES_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(ours).toEqual([...sums.keys()].sort());
  });

  it.each([...sums])('%s is byte-for-byte the guide original', (name, sum) => {
    expect(
      createHash('sha256')
        .update(readFileSync(join(GUIDE_EXAMPLES_DIR, name)))
        .digest('hex'),
    ).toBe(sum);
  });
});
