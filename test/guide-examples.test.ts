import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GUIDE_EXAMPLES_DIR, SHARED_DIR } from './fixtures/guide.ts';

const original = join(SHARED_DIR, 'seed/examples');

describe('the guide examples shipped in examples/guide', () => {
  it.skipIf(!existsSync(original))('are byte-for-byte the originals in ../shared/seed/examples', () => {
    const ours = readdirSync(GUIDE_EXAMPLES_DIR).filter((f) => f.endsWith('.yaml')).sort();
    const theirs = readdirSync(original).filter((f) => f.endsWith('.yaml')).sort();
    expect(ours).toEqual(theirs);
    for (const f of theirs) expect(readFileSync(join(GUIDE_EXAMPLES_DIR, f), 'utf8')).toBe(readFileSync(join(original, f), 'utf8'));
  });
});
