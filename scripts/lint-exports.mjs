#!/usr/bin/env node
// lint-exports: every exported symbol of a source file must be imported by some other file (tests count).
// An export nobody imports is either dead code or something that should not be exported: drop the `export`
// (or the code). Part of `npm run lint`; CONTRIBUTING.md says how it works.
//
// It uses the TypeScript compiler's checker, so an import through a barrel (engine/index.ts re-exports) or a
// renamed import counts for the declaration it reaches. What counts as a use:
//   - a named or default import, `export { x } from` in a file that is itself imported from, `import('./x.ts').T`
//     in a type, and `ns.x` through `import * as ns` (a namespace used any other way uses all of its module);
//   - every export of a module loaded at run time: a dynamic import with a literal path, a template path
//     (`./commands/${name}.ts`: every file of that folder; also as `new URL(template, ...)`, the URL imported
//     later), a worker or script named by a literal path
//     ('./engine.worker.ts'), bin/*.mjs's imports of dist/**.js (the built twin of a source file);
//   - the AssemblyScript sources (solver-as/assembly, compiled by asc, not tsc) are read for their imports of
//     solver-as/abi.ts and of each other; solver-as/assembly/index.ts is the wasm module's export list;
//   - ENTRY below: the few files loaded by something that is not TypeScript, each with the reason.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

// The tree to check: this checkout, or the folder given (the script's test runs it on small trees).
const root = process.argv[2] ? resolve(process.argv[2]) : resolve(dirname(new URL(import.meta.url).pathname), '..');
const ts = createRequire(import.meta.url)('typescript');

/** Files whose every export is used by something outside TypeScript's view. */
const ENTRY = new Map([
  ['vitest.config.ts', 'read by vitest'],
  ['solver-as/assembly/index.ts', "the wasm module's exports (asc entry, asconfig.json)"],
]);

/** The tree's sources: git's list of tracked and new files in a checkout, else every file under the folder. */
function sources() {
  const skip = (f) => f.startsWith('node_modules/') || f.startsWith('dist/') || f.startsWith('solver-as/build/');
  const wanted = (f) => /\.(ts|mts|mjs)$/.test(f) && !skip(f) && existsSync(join(root, f));
  if (existsSync(join(root, '.git')))
    return execFileSync('git', ['ls-files', '-co', '--exclude-standard', '*.ts', '*.mts', '*.mjs'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f, i, all) => wanted(f) && all.indexOf(f) === i); // an unmerged file is listed once per stage
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((f) => f.split('\\').join('/'))
    .filter(wanted);
}
const files = sources();
const isAssembly = (f) => f.startsWith('solver-as/assembly/');
const isTest = (f) => /\.(test|spec)\.[cm]?ts$/.test(f) || f.endsWith('.d.ts');

const program = ts.createProgram({
  rootNames: files.filter((f) => !isAssembly(f)).map((f) => join(root, f)),
  options: {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowJs: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  },
});
const checker = program.getTypeChecker();
const rel = (abs) => relative(root, abs);

/** Declarations reached by an import, as "file#name" of the declaring file. */
const used = new Set();
/** Files every export of which is used. */
const whole = new Set(ENTRY.keys());

const original = (sym) => (sym && sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym);
function markSymbol(sym) {
  const s = original(sym);
  for (const d of s?.declarations ?? []) used.add(`${rel(d.getSourceFile().fileName)}#${s.escapedName}`);
}
function markModule(moduleSymbol) {
  const decl = moduleSymbol?.valueDeclaration ?? moduleSymbol?.declarations?.[0];
  if (decl && ts.isSourceFile(decl)) whole.add(rel(decl.fileName));
}
/** A literal relative path from `from` to a file of the repo: that file is loaded at run time. */
function markPath(from, text) {
  if (!/^\.\.?\//.test(text)) return;
  const target = relative(root, resolve(dirname(join(root, from)), text))
    .replace(/^dist\//, '')
    .replace(/\.js$/, '.ts');
  for (const f of [target, target.replace(/\.ts$/, '.mts')]) if (files.includes(f)) whole.add(f);
}
/** `./commands/${name}.ts`: every file of the folder that matches the head and the tail. */
function markTemplate(from, tpl) {
  const head = tpl.head.text;
  const tail = tpl.templateSpans.at(-1).literal.text;
  if (!/^\.\.?\//.test(head) || !head.includes('/')) return;
  const prefix = relative(root, resolve(dirname(join(root, from)), head.replace(/[^/]*$/, '')));
  for (const f of files)
    if (dirname(f) === prefix && f.endsWith(tail) && !isTest(f) && `${f}`.includes(head.replace(/^.*\//, '')))
      whole.add(f);
}

/** `const { a, b } = await import('./x.ts')`: the names taken, else undefined (the whole module is used). */
function destructured(call) {
  const p = ts.isAwaitExpression(call.parent) ? call.parent.parent : undefined;
  if (!p || !ts.isVariableDeclaration(p) || !ts.isObjectBindingPattern(p.name)) return undefined;
  if (p.name.elements.some((e) => e.dotDotDotToken)) return undefined;
  return p.name.elements.map((e) => (e.propertyName ?? e.name).getText());
}
function markNames(moduleSymbol, names) {
  if (!moduleSymbol) return;
  const exports = checker.getExportsOfModule(moduleSymbol);
  for (const n of names) markSymbol(exports.find((s) => s.escapedName === n));
}

/** The path of an import or export declaration (resolved by the checker, not a run-time load). */
const isSpecifier = (node) =>
  ts.isImportDeclaration(node.parent) ||
  ts.isExportDeclaration(node.parent) ||
  ts.isExternalModuleReference(node.parent) ||
  (ts.isLiteralTypeNode(node.parent) && ts.isImportTypeNode(node.parent.parent)) ||
  (ts.isCallExpression(node.parent) && node.parent.expression.kind === ts.SyntaxKind.ImportKeyword);

for (const sf of program.getSourceFiles()) {
  const file = rel(sf.fileName);
  if (file.startsWith('..') || file.includes('node_modules')) continue;
  const namespaces = new Map();
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && node.importClause) {
      const c = node.importClause;
      if (c.name) markSymbol(checker.getSymbolAtLocation(c.name));
      const b = c.namedBindings;
      if (b && ts.isNamedImports(b)) for (const e of b.elements) markSymbol(checker.getSymbolAtLocation(e.name));
      if (b && ts.isNamespaceImport(b)) namespaces.set(checker.getSymbolAtLocation(b.name), node.moduleSpecifier);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.exportClause) {
      // `export * from`: reached through the barrel's own exports when they are imported.
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && isTest(file)) {
      markModule(checker.getSymbolAtLocation(node.moduleSpecifier));
    } else if (ts.isImportTypeNode(node)) {
      if (node.qualifier)
        markSymbol(
          checker.getSymbolAtLocation(ts.isQualifiedName(node.qualifier) ? node.qualifier.right : node.qualifier),
        );
      else markModule(checker.getSymbolAtLocation(node.argument.literal));
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      const names = destructured(node);
      if (arg && ts.isStringLiteralLike(arg) && names) markNames(checker.getSymbolAtLocation(arg), names);
      else if (arg && ts.isStringLiteralLike(arg)) markPath(file, arg.text);
      else if (arg && ts.isTemplateExpression(arg)) markTemplate(file, arg);
    } else if (
      ts.isTemplateExpression(node) &&
      ts.isNewExpression(node.parent) &&
      node.parent.arguments?.[0] === node &&
      node.parent.expression.getText() === 'URL'
    ) {
      // `new URL(`./commands/${name}${EXT}`, import.meta.url)`, imported by URL (cli/main.ts)
      markTemplate(file, node);
    } else if (ts.isStringLiteralLike(node) && /\.(ts|mts|mjs|js)$/.test(node.text) && !isSpecifier(node)) {
      markPath(file, node.text);
    } else if (ts.isIdentifier(node) && namespaces.size && !ts.isNamespaceImport(node.parent)) {
      const ns = namespaces.get(checker.getSymbolAtLocation(node));
      const p = node.parent;
      if (!ns) {
        // not a namespace import's name
      } else if (
        (ts.isPropertyAccessExpression(p) && p.expression === node) ||
        (ts.isQualifiedName(p) && p.left === node)
      )
        markSymbol(checker.getSymbolAtLocation(ts.isPropertyAccessExpression(p) ? p.name : p.right));
      else markModule(checker.getSymbolAtLocation(ns));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

// The AssemblyScript sources: `import { A, B } from './x'` and `export { A } from './x'` (no extension) by name,
// read without the checker.
const assembly = files.filter(isAssembly);
for (const f of assembly) {
  const text = readFileSync(join(root, f), 'utf8');
  for (const m of text.matchAll(/(?:import|export)\s*\{([^}]*)\}\s*from\s*'([^']+)'/g)) {
    const target = relative(root, resolve(dirname(join(root, f)), m[2])) + '.ts';
    for (const name of m[1]
      .split(',')
      .map((s) => s.trim().split(/\s+as\s+/)[0])
      .filter(Boolean))
      used.add(`${target}#${name}`);
  }
}

/** Names a file exports from its own declarations, with their lines. */
function ownExports(f) {
  const out = [];
  if (isAssembly(f)) {
    const text = readFileSync(join(root, f), 'utf8');
    text.split('\n').forEach((line, i) => {
      const m =
        /^(?:@\w+\s+)*export\s+(?:declare\s+)?(?:abstract\s+)?(?:const|let|var|function|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/.exec(
          line,
        );
      if (m) out.push([m[1], i + 1]);
    });
    return out;
  }
  const sf = program.getSourceFile(join(root, f));
  const ms = sf && checker.getSymbolAtLocation(sf);
  if (!ms) return out;
  for (const s of checker.getExportsOfModule(ms)) {
    if (s.flags & ts.SymbolFlags.Alias) continue; // a re-export: the declaring file answers for it
    const d = s.declarations?.find((x) => x.getSourceFile() === sf);
    if (!d) continue;
    out.push([s.escapedName, sf.getLineAndCharacterOfPosition(d.getStart(sf)).line + 1]);
  }
  return out;
}

const problems = [];
let checked = 0;
for (const f of files) {
  if (isTest(f) || whole.has(f) || f.endsWith('.mjs')) continue;
  for (const [name, line] of ownExports(f)) {
    checked++;
    if (!used.has(`${f}#${name}`)) problems.push(`${f}:${line}: ${name} is exported but nothing imports it`);
  }
}
if (problems.length) {
  console.error(problems.join('\n'));
  console.error(
    `lint-exports: ${problems.length} unused export(s): drop the export (or the code); a file loaded from outside TypeScript goes in ENTRY in scripts/lint-exports.mjs`,
  );
  process.exit(1);
}
console.log(`lint-exports: ok (${checked} exports, each imported somewhere)`);
