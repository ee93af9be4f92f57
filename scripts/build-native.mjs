#!/usr/bin/env node
// `npm run build:native [OUT]` (part of `npm run build`): compiles native/malloc.c, the controller's call into glibc's
// malloc_trim (controller/operator/malloc.ts), into native/build/malloc.node with the machine's C compiler ($CC,
// else cc) against the Node-API headers of the node that runs this script. scripts/build.mjs copies it into dist/.
//
// The addon is optional: a machine without a C compiler or Node's headers builds everything else, this script
// says what was missing, and the controller then runs without giving free malloc memory back (it logs that at
// start). A compiler that fails on the source is reported the same way, with its output.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'native', 'malloc.c');
/** Where the addon goes: native/build/malloc.node, or the path given (the tests build into a folder of their own). */
const out = process.argv[2] ? resolve(process.argv[2]) : join(root, 'native', 'build', 'malloc.node');

/** Where Node's own headers are: beside the binary (/usr/bin/node -> /usr/include/node) or under its install prefix. */
function headerDirs() {
  const candidates = [
    resolve(dirname(process.execPath), '..', 'include', 'node'),
    ...(process.config.variables.node_prefix ? [join(process.config.variables.node_prefix, 'include', 'node')] : []),
  ];
  return candidates.filter((d) => existsSync(join(d, 'node_api.h')));
}

function skip(why) {
  console.warn(
    `build-native: ${relative(root, out)} not built: ${why}. The controller will run without returning free malloc memory to the system (docs/building.md).`,
  );
  process.exit(0);
}

rmSync(out, { force: true });
if (process.platform !== 'linux') skip(`malloc_trim is glibc's, and this is ${process.platform}`);
const includes = headerDirs();
if (includes.length === 0) skip(`no node_api.h beside ${process.execPath} (Node's headers are not installed)`);
// $CC may carry words of its own ("ccache gcc", "gcc -m64"), as make passes it to the shell.
const [cc, ...ccWords] = (process.env.CC || 'cc').trim().split(/\s+/);
mkdirSync(dirname(out), { recursive: true });
const args = ['-O2', '-shared', '-fPIC', '-Wall', '-Wextra', `-I${includes[0]}`, '-DNODE_GYP_MODULE_NAME=malloc'];
const r = spawnSync(cc, [...ccWords, ...args, source, '-o', out], { encoding: 'utf8' });
if (r.error) skip(`no C compiler (${cc}: ${r.error.code ?? r.error.message})`);
if (r.status !== 0) skip(`${cc} failed (exit ${r.status}):\n${r.stderr}`);
if (r.stderr.trim()) console.warn(r.stderr.trim());
console.log(`build-native: ${relative(root, out)} (${cc}, headers ${includes[0]})`);
