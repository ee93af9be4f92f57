// Progress on stderr: silent for short runs, periodic lines without a terminal, a bar with an ETA on one.
import { describe, expect, it } from 'vitest';
import { memoryIo } from '../io.ts';
import { LINE_EVERY_MS, progress, QUIET_MS } from './progress.ts';

function clock() {
  const c = { t: 0, now: () => c.t };
  return c;
}

describe('progress', () => {
  it('says nothing for a run shorter than the quiet time', () => {
    const io = memoryIo();
    const c = clock();
    const p = progress(io, { total: 2, unit: 'job', now: c.now });
    p.update(0, 0.5);
    c.t = QUIET_MS - 1;
    p.done(0);
    p.done(1);
    p.finish();
    expect(io.stderr).toBe('');
  });

  it('writes a line every few seconds without a terminal, with the share done and an estimate of the time left', () => {
    const io = memoryIo();
    const c = clock();
    const p = progress(io, { total: 1, unit: '', now: c.now });
    c.t = QUIET_MS + 1;
    p.update(0, 0.25, 'consolidation step 3 of about 12');
    c.t += 100;
    p.update(0, 0.3);
    c.t += LINE_EVERY_MS;
    p.update(0, 0.5);
    p.done(0);
    p.finish();
    const lines = io.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^karpenter-ts whatif: 25%, about \d+ s left \(consolidation step 3 of about 12\)$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^karpenter-ts whatif: 50%, about \d+ s left/);
    expect(lines[2]).toMatch(/^karpenter-ts whatif: done in \d+ s$/);
  });

  it('redraws a bar in place on a terminal, counting jobs', () => {
    const io = {
      ...memoryIo(),
      errIsTTY: true,
      stderr: '',
      err(t: string) {
        io.stderr += t;
      },
    };
    const c = clock();
    const p = progress(io, { total: 4, unit: 'job', now: c.now });
    c.t = QUIET_MS + 1;
    p.done(0);
    c.t += 1000;
    p.update(1, 0.5);
    p.finish();
    expect(io.stderr).toMatch(/^\r\x1b\[K\[#{8}\.{22}\] 1\/4 jobs, 25%, about \d+ s left/);
    expect(io.stderr).toMatch(/\r\x1b\[K\[#{30}\] 1\/4 jobs, 38%.*took \d+ s\n$/);
  });
});
