// scripts/lint-layers.mjs keeps decisions off the controller's thread: a controller, simulator or CLI file that
// reaches past engine/index.ts, an engine/index.ts that exports an in-thread decision, or a module engine/index.ts
// loads (directly or in turn) that defines one, fails the lint.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const script = resolve(dirname(fileURLToPath(import.meta.url)), '../../scripts/lint-layers.mjs');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function lint(files: Record<string, string>): { code: number | null; lines: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'kts-layers-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const r = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  return { code: r.status, lines: `${r.stdout}${r.stderr}`.trim().split('\n') };
}

const engine = {
  'engine/local.ts': 'export function provision() {}\nexport class WasmSolver {}\n',
  'engine/solver/wasm.ts': 'export class WasmSolver {}\n',
  'engine/engine.ts': 'export function createEngine() {}\n',
};

describe('lint-layers', () => {
  it('passes a controller, simulator and CLI that decide through createEngine', () => {
    const r = lint({
      ...engine,
      'engine/index.ts': "export { createEngine } from './engine.ts';\n",
      'controller/main.ts': "import { createEngine } from '../engine/index.ts';\n",
      'sim/engine.ts': "import { createEngine } from '../engine/index.ts';\n",
      'cli/whatif.ts': "import { createEngine } from '../engine/index.ts';\n",
    });
    expect(r).toEqual({ code: 0, lines: ['lint-layers: ok'] });
  });

  it('fails a solver reached from controller/, sim/ or cli/, and an in-thread decision on the public surface', () => {
    const r = lint({
      ...engine,
      'engine/index.ts': "export * from './local.ts';\nexport { createEngine } from './engine.ts';\n",
      'controller/controllers/provisioning/reconcile.ts': "import { provision } from '../../../engine/local.ts';\n",
      'sim/warmup.ts': "import { WasmSolver } from '../engine/solver/wasm.ts';\n",
      'cli/commands/whatif.ts': "const m = await import('../../engine/local.ts');\n",
    });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^controller\/controllers\/provisioning\/reconcile\.ts: imports .*local\.ts: controller\/ reaches the engine only through engine\/index\.ts$/,
        ),
        expect.stringMatching(
          /^sim\/warmup\.ts: imports .*wasm\.ts: sim\/ reaches the engine only through engine\/index\.ts$/,
        ),
        expect.stringMatching(
          /^cli\/commands\/whatif\.ts: imports .*local\.ts: cli\/ reaches the engine only through engine\/index\.ts$/,
        ),
        expect.stringMatching(/^engine\/index\.ts: exports provision, which decides in the calling thread/),
        expect.stringMatching(/^engine\/index\.ts: exports WasmSolver, which decides in the calling thread/),
        expect.stringMatching(/^engine\/local\.ts: defines provision, a decision, and the calling thread loads it/),
        'lint-layers: 7 problem(s)',
      ]),
    );
  });

  it('fails a decision the public surface loads under another name or beside a helper', () => {
    const r = lint({
      ...engine,
      'engine/solver/provision.ts': 'export function provision() {}\n',
      'engine/disruption/disrupt.ts': 'export function disrupt() {}\nexport function methodsFor() {}\n',
      'engine/disruption/index.ts': "export { methodsFor } from './disrupt.ts';\n",
      'engine/index.ts':
        "export { provision as plan } from './solver/provision.ts';\nexport * from './disruption/index.ts';\nexport { createEngine } from './engine.ts';\n",
    });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      expect.stringMatching(
        /^engine\/solver\/provision\.ts: defines provision, a decision, and the calling thread loads it \(engine\/index\.ts -> engine\/solver\/provision\.ts\)/,
      ),
      expect.stringMatching(
        /^engine\/disruption\/disrupt\.ts: defines disrupt, .*\(engine\/index\.ts -> engine\/disruption\/index\.ts -> engine\/disruption\/disrupt\.ts\)/,
      ),
      'lint-layers: 2 problem(s)',
    ]);
  });

  it('fails a decision written as a function expression bound to a name', () => {
    const r = lint({
      ...engine,
      'engine/solver/provision.ts': 'export const provision = async (input: unknown) => input;\n',
      'engine/disruption/disrupt.ts': 'export let disrupt = function () {};\nexport const methodsFor = 3;\n',
      'engine/solver/wasm2.ts':
        'const WasmSolver = class {};\nexport const validate: (x: number) => number = x => x;\n',
      'engine/index.ts':
        "export { provision as plan } from './solver/provision.ts';\nexport { methodsFor } from './disruption/disrupt.ts';\nimport './solver/wasm2.ts';\nexport { createEngine } from './engine.ts';\n",
    });
    expect(r.code).toBe(1);
    expect(r.lines.map((l) => l.split(',')[0])).toEqual([
      'engine/solver/provision.ts: defines provision',
      'engine/disruption/disrupt.ts: defines disrupt',
      'engine/solver/wasm2.ts: defines WasmSolver',
      'engine/solver/wasm2.ts: defines validate',
      'lint-layers: 4 problem(s)',
    ]);
  });

  it('passes a type the public surface takes from a decision module (types load nothing)', () => {
    const r = lint({
      ...engine,
      'engine/disruption/disrupt.ts': 'export interface Decision {}\nexport function disrupt() {}\n',
      'engine/index.ts':
        "export type { Decision } from './disruption/disrupt.ts';\nimport type { WasmSolver } from './solver/wasm.ts';\nexport { createEngine } from './engine.ts';\n",
    });
    expect(r).toEqual({ code: 0, lines: ['lint-layers: ok'] });
  });

  it("fails each layer's own rules: solver-as/ importing out, an impure engine, controller/, sim/, bench/ and scripts/ past their imports", () => {
    const r = lint({
      ...engine,
      'engine/index.ts': "export { createEngine } from './engine.ts';\n",
      'solver-as/abi.ts': "import { x } from './other.ts';\n",
      'solver-as/a.test.ts': "import { it } from 'vitest';\n",
      'engine/pure.ts':
        "import { readFileSync } from 'node:fs';\nimport pino from 'pino';\nimport Piscina from 'piscina';\nimport { abi } from '../solver-as/abi.ts';\nimport { api } from '../controller/api.ts';\nexport const t = () => [Date.now(), setTimeout(() => 0), performance.now(), process.env.X];\n",
      'engine/pure.test.ts': "import { readFileSync } from 'node:fs';\nDate.now();\n",
      'engine/pool/worker.ts':
        "import Piscina from 'piscina';\nexport const t = () => [setTimeout(() => 0), performance.now()];\n",
      'controller/main.ts': "import { fake } from '../test/fakes/kube.ts';\n",
      'sim/cluster.ts': "import { rows } from '../bench/rows.ts';\n",
      'bench/run.ts':
        "import { createEngine } from '../engine/local.ts';\nimport { fx } from '../test/fixtures/fx.ts';\nimport { start } from '../sim/start.ts';\n",
      'bench/controller/run.ts': "import { start } from '../../sim/start.ts';\n",
      'scripts/gen.mjs': "import { fx } from '../test/fixtures/fx.ts';\n",
    });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      'solver-as/a.test.ts: imports vitest: solver-as/ may import only its own files',
      'solver-as/abi.ts: imports ./other.ts: solver-as/abi.ts must import nothing',
      'engine/pure.ts: imports node:fs: the engine never touches files or the network',
      'engine/pure.ts: imports pino: the engine never imports Kubernetes, AWS, metrics or logging',
      'engine/pure.ts: imports piscina: only engine/pool/ may use threads and the LP solver module',
      'engine/pure.ts: imports ../controller/api.ts: engine/ may import only engine/, solver-as/abi.ts and the built wasm',
      'engine/pure.ts: reads the wall clock: the engine takes time as an argument',
      'engine/pure.ts: uses timers: only engine/pool/ may (for deadlines)',
      'engine/pure.ts: reads a clock: only engine/pool/ and the wasm host may (for compute deadlines)',
      'engine/pure.ts: touches the process: the engine gets its options as arguments',
      'controller/main.ts: imports ../test/fakes/kube.ts: controller/ must not import test/',
      'sim/cluster.ts: imports ../bench/rows.ts: sim/ must not import bench/',
      'bench/run.ts: imports ../sim/start.ts: bench/ may import engine/index.ts and test/fixtures only (bench/controller/ also sim/)',
      'scripts/gen.mjs: imports ../test/fixtures/fx.ts: scripts/ must not import test/',
      'lint-layers: 14 problem(s)',
    ]);
  });

  it('passes the repository itself', () => {
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('lint-layers: ok');
    expect(r.status).toBe(0);
  });
});
