#!/usr/bin/env node
// The `karpenter-ts` command: runs the compiled build in dist/ (`npm run build`; `npm ci` builds it). Plain
// Node, no TypeScript loader: the container image runs this same file over its dist/.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', 'BUILD');

if (!existsSync(stamp)) {
  process.stderr.write('karpenter-ts: dist/ is not built: run `npm run build` (npm ci builds it too)\n');
  process.exit(2);
}
warnIfStale();
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv.slice(2));

/** In a source checkout, says so when a runtime source is newer than the build (edited, or a new checkout). */
function warnIfStale() {
  if (!existsSync(join(root, 'cli', 'main.ts'))) return;
  const built = statSync(stamp).mtimeMs;
  const dirs = ['engine', 'controller', 'sim', 'cli', 'scenarios', 'examples/guide', 'solver-as/build'];
  const newer = dirs.map((d) => newerSource(join(root, d), built)).find(Boolean);
  if (newer)
    process.stderr.write(
      `karpenter-ts: ${newer.slice(root.length + 1)} is newer than dist/: run \`npm run build\` to run it\n`,
    );
}

function newerSource(dir, than) {
  if (!existsSync(dir)) return undefined;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const found = newerSource(p, than);
      if (found) return found;
    } else if (/\.(ts|mjs|json|yaml)$/.test(e.name) && !/\.test\.ts$/.test(e.name) && statSync(p).mtimeMs > than) {
      return p;
    }
  }
  return undefined;
}
