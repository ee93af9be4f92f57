// The packages the runtime's bundles leave out and load from node_modules at run time (scripts/build.mjs passes
// them to esbuild as `external`; scripts/stage-image.mjs keeps only them, and what they depend on, in the image's
// node_modules). Everything else the runtime imports is inside the bundles (docs/building.md).
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * - piscina starts each worker thread on its own dist/worker.js, which it finds through its __dirname;
 * - highs (HiGHS' emscripten glue) locates and loads its own files through __dirname and require;
 * - msgpackr-extract, msgpackr's optional native string extractor, finds its binary through __dirname (bundled,
 *   it would never load, and msgpackr's main entry would decode strings without it).
 */
export const EXTERNAL = ['piscina', 'highs', 'msgpackr-extract'];

/** Where Node finds package `name` for code in `fromDir`, looking no higher than the tree holding `modules`. */
function locate(name, fromDir, modules) {
  for (let d = fromDir; ; d = dirname(d)) {
    const candidate = basename(d) === 'node_modules' ? join(d, name) : join(d, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (d === dirname(modules) || d === dirname(d)) return undefined;
  }
}

/**
 * The folders of the installed packages `roots` and everything they depend on (dependencies, optional and peer
 * dependencies that are installed), in the node_modules folder `modules`, resolved as Node resolves them.
 */
export function dependencyClosure(modules, roots) {
  const keep = new Set();
  const visit = (name, fromDir) => {
    const dir = locate(name, fromDir, modules);
    if (!dir || keep.has(dir)) return;
    keep.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const deps = { ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies };
    for (const d of Object.keys(deps)) visit(d, dir);
  };
  for (const r of roots) visit(r, dirname(modules));
  return keep;
}

/** Removes from `modules` every package outside `keep`, and npm's bin links and hidden lockfile; returns the count. */
export function pruneModules(modules, keep) {
  let removed = 0;
  for (const name of readdirSync(modules)) {
    if (name.startsWith('.')) {
      rmSync(join(modules, name), { recursive: true, force: true });
      continue;
    }
    const dirs = name.startsWith('@')
      ? readdirSync(join(modules, name)).map((m) => join(modules, name, m))
      : [join(modules, name)];
    for (const dir of dirs)
      if (!keep.has(dir)) {
        rmSync(dir, { recursive: true, force: true });
        removed++;
      }
    if (name.startsWith('@') && readdirSync(join(modules, name)).length === 0)
      rmSync(join(modules, name), { recursive: true });
  }
  return removed;
}
