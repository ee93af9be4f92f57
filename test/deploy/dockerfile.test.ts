// deploy/Dockerfile: every stage's base image is pinned by digest, the runtime runs the compiled dist/ (never
// tsx) as a numeric non-root user that does not own /app, and the version label is the package's version.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const text = readFileSync(new URL('../../deploy/Dockerfile', import.meta.url), 'utf8');
const lines = text.split('\n').filter((l) => !l.trimStart().startsWith('#'));
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** ARG defaults, for FROM ${X}. */
const args = new Map(
  lines.flatMap((l) => {
    const m = /^ARG\s+(\w+)=(\S+)/.exec(l.trim());
    return m ? [[m[1]!, m[2]!] as const] : [];
  }),
);
const bases = lines.flatMap((l) => {
  const m = /^FROM\s+(\S+)/.exec(l.trim());
  return m ? [m[1]!.replace(/^\$\{(\w+)\}$/, (_, name: string) => args.get(name) ?? _)] : [];
});
const runtime = text.slice(text.lastIndexOf('\nFROM '));

describe('deploy/Dockerfile', () => {
  it('pins every base image by digest', () => {
    expect(bases.length).toBeGreaterThanOrEqual(2);
    for (const b of bases) expect(b).toMatch(/^node:22-bookworm-slim@sha256:[0-9a-f]{64}$/);
  });

  it('leaves /app owned by root: no --chown, and the user is numeric and not root', () => {
    expect(text).not.toMatch(/--chown/);
    expect(runtime).toMatch(/^USER 65532:65532$/m);
    expect(runtime).not.toMatch(/^RUN /m);
  });

  it('runs the compiled command, never tsx, and labels the package version', () => {
    expect(runtime).toMatch(/^ENTRYPOINT \["node", "bin\/karpenter-ts\.mjs"\]$/m);
    expect(text).not.toMatch(/tsx/);
    expect(runtime).toContain(`org.opencontainers.image.version="${pkg.version}"`);
  });

  it('builds the malloc addon in the build stage only: its compiler never reaches the runtime', () => {
    const build = text.slice(text.indexOf('\nFROM '), text.lastIndexOf('\nFROM '));
    expect(build).toMatch(/apt-get install -y --no-install-recommends gcc libc6-dev/);
    expect(build).toMatch(/^COPY native \.\/native$/m);
    expect(runtime).not.toMatch(/apt-get|gcc/);
  });

  it('installs production dependencies only into the image (scripts/stage-image.mjs)', () => {
    expect(text).toMatch(/scripts\/stage-image\.mjs \/stage/);
    expect(runtime).toMatch(/^COPY --from=build \/stage \/app$/m);
    expect(readFileSync(new URL('../../scripts/stage-image.mjs', import.meta.url), 'utf8')).toMatch(
      /'ci', '--omit=dev', '--ignore-scripts'/,
    );
  });
});
