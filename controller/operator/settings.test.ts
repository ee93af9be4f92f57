// Every Karpenter setting is accepted, as a flag and as an environment variable, and either takes effect or
// is one docs/controller.md lists as having no effect, with the reason, warned about at start
// (test/fixtures/karpenter/settings.json holds Karpenter's settings as facts).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { newLogger } from './logger.ts';
import { OPTION_SPECS, resolveOptions } from './options.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const settings = (
  JSON.parse(readFileSync(join(ROOT, 'test/fixtures/karpenter/settings.json'), 'utf8')) as {
    settings: Array<{ flag: string; env: string; value: string }>;
  }
).settings;
const doc = readFileSync(join(ROOT, 'docs/controller.md'), 'utf8');
const NEEDS = { CLUSTER_NAME: 'my-cluster', CLUSTER_ENDPOINT: 'https://api.example' };

describe("Karpenter's settings", () => {
  for (const s of settings) {
    it(`--${s.flag} and ${s.env} are accepted, and documented`, () => {
      const spec = OPTION_SPECS.find((o) => o.flag === s.flag);
      expect(spec, `no option --${s.flag}`).toBeDefined();
      expect(spec!.env).toBe(s.env);
      const fromFlag = resolveOptions([`--${s.flag}=${s.value}`], NEEDS);
      const fromEnv = resolveOptions([], { ...NEEDS, [s.env]: s.value });
      expect(JSON.stringify(fromFlag)).toBe(JSON.stringify(fromEnv));
      expect(JSON.stringify(fromFlag)).not.toBe(JSON.stringify(resolveOptions([], NEEDS)));
      expect(doc.includes(`| \`--${s.flag}\` | \`${s.env}\` |`), `docs/controller.md has no row for --${s.flag}`).toBe(
        true,
      );
      if (spec!.noop) {
        expect(fromEnv.ignored.map((i) => i.env)).toEqual([s.env]);
        expect(
          new RegExp(`\`--${s.flag}\` \\| \`${s.env}\` \\|[^\\n]*no effect`).test(doc),
          `docs/controller.md does not say --${s.flag} has no effect`,
        ).toBe(true);
      } else {
        expect(fromEnv.ignored).toEqual([]);
      }
    });
  }

  it('warns about nothing when no ignored setting is set', () => {
    expect(resolveOptions([], NEEDS).ignored).toEqual([]);
  });

  it('refuses refresh intervals under a minute, as Karpenter', () => {
    expect(() => resolveOptions(['--ami-refresh-interval=30s'], NEEDS)).toThrow(
      /--ami-refresh-interval must be at least 1m, got "30s"/,
    );
  });
});

describe('LOG_OUTPUT_PATHS and LOG_ERROR_OUTPUT_PATHS', () => {
  it('write lines to every output path, and failures to write them to the error paths', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-logs-'));
    try {
      const o = resolveOptions([], {
        ...NEEDS,
        LOG_OUTPUT_PATHS: `${join(dir, 'a.log')},${join(dir, 'b.log')},${join(dir, 'missing', 'c.log')}`,
        LOG_ERROR_OUTPUT_PATHS: join(dir, 'errors.log'),
      });
      const log = newLogger({ level: 'info', outputPaths: o.logOutputPaths, errorOutputPaths: o.logErrorOutputPaths });
      log.info({ nodeclaim: 'default-abc' }, 'launched nodeclaim');
      await new Promise((r) => setTimeout(r, 200));
      for (const f of ['a.log', 'b.log']) {
        const line = JSON.parse(readFileSync(join(dir, f), 'utf8').trim()) as Record<string, unknown>;
        expect(line).toMatchObject({
          level: 'INFO',
          logger: 'controller',
          message: 'launched nodeclaim',
          NodeClaim: { name: 'default-abc' },
        });
      }
      const err = JSON.parse(readFileSync(join(dir, 'errors.log'), 'utf8').trim().split('\n')[0]!) as Record<
        string,
        unknown
      >;
      expect(err).toMatchObject({
        level: 'ERROR',
        message: 'writing log output failed',
        path: join(dir, 'missing', 'c.log'),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
