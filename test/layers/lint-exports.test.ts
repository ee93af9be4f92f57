// scripts/lint-exports.mjs fails on an exported symbol nobody imports, and counts the ways this code imports:
// through a barrel, under another name, through a namespace, by a dynamic import of a folder, and from the
// AssemblyScript sources.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const script = resolve(dirname(fileURLToPath(import.meta.url)), '../../scripts/lint-exports.mjs');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function lint(files: Record<string, string>): { code: number | null; lines: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'kts-exports-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const r = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  return { code: r.status, lines: `${r.stdout}${r.stderr}`.trim().split('\n') };
}

describe('lint-exports', () => {
  it('passes exports reached through a barrel, a rename, a namespace, a folder import and a test', () => {
    const r = lint({
      'engine/a.ts': 'export const viaBarrel = 1;\nexport type Renamed = number;\nexport function onlyTests() {}\n',
      'engine/b.ts': 'export const viaNamespace = 2;\n',
      'engine/index.ts': "export * from './a.ts';\n",
      'cli/commands/run.ts': 'export const summary = "";\n',
      'cli/main.ts':
        "import { viaBarrel, type Renamed as R } from '../engine/index.ts';\nimport * as b from '../engine/b.ts';\n" +
        'const name = process.argv[2];\nawait import(`./commands/${name}.ts`);\nconst x: R = viaBarrel + b.viaNamespace;\n',
      'engine/a.test.ts': "import { onlyTests } from './a.ts';\nonlyTests();\n",
      'solver-as/abi.ts': 'export const H_WORDS = 4;\n',
      'solver-as/assembly/index.ts':
        "import { H_WORDS } from '../abi';\nexport function solve(): i32 { return H_WORDS; }\n",
    });
    expect(r).toEqual({ code: 0, lines: [expect.stringMatching(/^lint-exports: ok/)] });
  });

  it('names each export nobody imports, with its file and line', () => {
    const r = lint({
      'engine/a.ts': 'export const used = 1;\n\nexport interface Unused {}\nexport const alsoUnused = 2;\n',
      'engine/index.ts': "export { used, type Unused } from './a.ts';\n",
      'cli/main.ts': "import { used } from '../engine/index.ts';\nconsole.log(used);\n",
      'solver-as/abi.ts': 'export const H_WORDS = 4;\nexport const H_DEAD = 5;\n',
      'solver-as/assembly/index.ts':
        "import { H_WORDS } from '../abi';\nexport function solve(): i32 { return H_WORDS; }\n",
    });
    expect(r.code).toBe(1);
    expect(r.lines.filter((l) => !l.startsWith('lint-exports:')).sort()).toEqual([
      'engine/a.ts:3: Unused is exported but nothing imports it',
      'engine/a.ts:4: alsoUnused is exported but nothing imports it',
      'solver-as/abi.ts:2: H_DEAD is exported but nothing imports it',
    ]);
  });
});
