// The top-level command: --help on stdout without loading any command, --version, and the README's
// command table listing every command.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { memoryIo } from './io.ts';
import { main, SUMMARIES } from './main.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('karpenter-ts', () => {
  it('prints --help on stdout and exits 0; no command at all is a usage error on stderr', async () => {
    const io = memoryIo();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.stderr).toBe('');
    for (const name of Object.keys(SUMMARIES)) expect(io.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    const bare = memoryIo();
    expect(await main([], bare)).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toContain('usage: karpenter-ts <command>');
  });

  it('prints the version from package.json', async () => {
    const io = memoryIo();
    expect(await main(['--version'], io)).toBe(0);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(io.stdout).toMatch(
      new RegExp(`^karpenter-ts ${pkg.version.replaceAll('.', '\\.')}( \\(commit [0-9a-f]+\\))?\\n$`),
    );
  });

  it("keeps each command's summary in the help, and every command in the README's table", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const [name, summary] of Object.entries(SUMMARIES)) {
      const mod = (await import(`./commands/${name}.ts`)) as { summary: string };
      expect(mod.summary).toBe(summary);
      expect(readme, `README lists no \`karpenter-ts ${name}\``).toMatch(new RegExp(`\\| \`karpenter-ts ${name}[ \`]`));
    }
  });
});
