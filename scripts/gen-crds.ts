// Writes charts/karpenter-ts/crds/*.yaml from the schemas in engine/api/schemas/ (the validator evaluates
// the same data, so the CRDs and `karpenter-ts validate` agree). Run: npx tsx scripts/gen-crds.ts
// With --check it writes nothing and exits 1 if a committed file differs from what would be generated.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRDS, crdFileName, crdYaml } from '../engine/api/index.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CRD_DIR = join(root, 'charts', 'karpenter-ts', 'crds');

function main(): number {
  let check: boolean;
  try {
    check = parseArgs({ options: { check: { type: 'boolean' } } }).values.check === true;
  } catch (e) {
    console.error(`gen-crds: ${(e as Error).message}\nusage: npx tsx scripts/gen-crds.ts [--check]`);
    return 2;
  }
  let stale = 0;
  mkdirSync(CRD_DIR, { recursive: true });
  for (const def of CRDS) {
    const file = join(CRD_DIR, crdFileName(def));
    const text = crdYaml(def);
    if (check) {
      let current = '';
      try {
        current = readFileSync(file, 'utf8');
      } catch {
        current = '';
      }
      if (current !== text) {
        console.error(`${file} is out of date: run npx tsx scripts/gen-crds.ts`);
        stale++;
      }
    } else {
      writeFileSync(file, text);
      console.log(`wrote ${file}`);
    }
  }
  return stale === 0 ? 0 : 1;
}

process.exitCode = main();
