// scripts/build-native.mjs: the malloc addon is optional. Without a C compiler the build says what was missing and
// goes on (exit 0, no file); with one it writes an addon the controller's loader accepts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMalloc } from '../../controller/operator/malloc.ts';

const script = new URL('../../scripts/build-native.mjs', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'build-native-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function build(out: string, cc: string) {
  return spawnSync(process.execPath, [script, out], { encoding: 'utf8', env: { ...process.env, CC: cc } });
}

const hasCc = spawnSync('cc', ['--version']).status === 0;
const hasHeaders = existsSync(join(process.execPath, '..', '..', 'include', 'node', 'node_api.h'));

describe('scripts/build-native.mjs', () => {
  it.runIf(process.platform === 'linux')('says there is no compiler, builds nothing, and lets the build go on', () => {
    const out = join(dir, 'none', 'malloc.node');
    const r = build(out, '/nonexistent/cc');
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/malloc\.node not built: .*\/nonexistent\/cc: ENOENT/);
    expect(r.stderr).toContain('without returning free malloc memory');
    expect(existsSync(out)).toBe(false);
  });

  it.runIf(process.platform === 'linux' && hasCc && hasHeaders)(
    'builds an addon the controller loads, with $CC words',
    () => {
      const out = join(dir, 'cc', 'malloc.node');
      const r = build(out, 'cc -O1');
      expect(r.status, r.stderr).toBe(0);
      expect(existsSync(out)).toBe(true);
      const load = loadMalloc(out);
      expect(load.ok, load.ok ? '' : load.reason).toBe(true);
    },
  );
});
