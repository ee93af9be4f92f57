// Writes sim/apiserver/protobuf-schema.ts: the protobuf field numbers, names and types of the Kubernetes
// messages the simulated API server decodes (the kinds it serves, Eviction and DeleteOptions, and every
// message they reach), read from the generated.proto files of k8s.io/api and k8s.io/apimachinery.
//
//   node scripts/gen-protobuf-schema.mjs API_GIT_DIR APIMACHINERY_GIT_DIR
//
// Each argument is a git directory of the repository (bare or not); the files are read at HEAD.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const [apiDir, machineryDir] = process.argv.slice(2);
if (!apiDir || !machineryDir) {
  console.error('usage: node scripts/gen-protobuf-schema.mjs API_GIT_DIR APIMACHINERY_GIT_DIR');
  process.exit(2);
}

const FILES = [
  [apiDir, 'core/v1/generated.proto'],
  [apiDir, 'apps/v1/generated.proto'],
  [apiDir, 'policy/v1/generated.proto'],
  [apiDir, 'coordination/v1/generated.proto'],
  [apiDir, 'storage/v1/generated.proto'],
  [apiDir, 'events/v1/generated.proto'],
  [apiDir, 'resource/v1/generated.proto'],
  [apiDir, 'autoscaling/v1/generated.proto'],
  [machineryDir, 'pkg/apis/meta/v1/generated.proto'],
  [machineryDir, 'pkg/runtime/generated.proto'],
  [machineryDir, 'pkg/util/intstr/generated.proto'],
  [machineryDir, 'pkg/api/resource/generated.proto'],
];

const ROOTS = [
  ...[
    'Pod',
    'Node',
    'Namespace',
    'Event',
    'Service',
    'ConfigMap',
    'PersistentVolume',
    'PersistentVolumeClaim',
    'Binding',
  ].map((k) => `k8s.io.api.core.v1.${k}`),
  ...['Deployment', 'ReplicaSet', 'DaemonSet', 'StatefulSet'].map((k) => `k8s.io.api.apps.v1.${k}`),
  'k8s.io.api.policy.v1.PodDisruptionBudget',
  'k8s.io.api.policy.v1.Eviction',
  'k8s.io.api.coordination.v1.Lease',
  ...['StorageClass', 'CSINode', 'VolumeAttachment'].map((k) => `k8s.io.api.storage.v1.${k}`),
  'k8s.io.api.events.v1.Event',
  ...['ResourceSlice', 'ResourceClaim', 'ResourceClaimTemplate', 'DeviceClass'].map(
    (k) => `k8s.io.api.resource.v1.${k}`,
  ),
  'k8s.io.api.autoscaling.v1.Scale',
  'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  'k8s.io.apimachinery.pkg.runtime.Unknown',
];

const SCALARS = new Set([
  'string',
  'int32',
  'int64',
  'bool',
  'bytes',
  'double',
  'float',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
]);

/** message full name -> fields [name, number, type, repeated] */
const messages = new Map();
const commits = new Map();
for (const [dir, path] of FILES) {
  const text = execFileSync('git', ['-C', dir, 'show', `HEAD:${path}`], { encoding: 'utf8' });
  commits.set(dir, execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim());
  const pkg = /^package\s+([\w.]+);/m.exec(text)[1];
  const body = text.replace(/\/\/.*$/gm, '');
  for (const m of body.matchAll(/message\s+(\w+)\s*\{([^}]*)\}/g)) {
    const fields = [];
    for (const f of m[2].matchAll(
      /(?:(optional|repeated)\s+([\w.]+)|(map<\s*([\w.]+)\s*,\s*([\w.]+)\s*>))\s+(\w+)\s*=\s*(\d+)/g,
    )) {
      const resolve = (t) => (SCALARS.has(t) ? t : t.includes('.') ? t.replace(/^\./, '') : `${pkg}.${t}`);
      if (f[3]) fields.push([f[6], Number(f[7]), `map<${resolve(f[4])},${resolve(f[5])}>`, false]);
      else fields.push([f[6], Number(f[7]), resolve(f[2]), f[1] === 'repeated']);
    }
    messages.set(`${pkg}.${m[1]}`, fields);
  }
}

// Scalar fields that are Go pointers (their zero value is a value, e.g. replicas: 0); other scalars are written
// on the wire even when zero, where JSON omits them.
const pointers = new Set();
const inline = new Set();
const goDirs = new Map(FILES.map(([dir, path]) => [path.replace(/\/generated\.proto$/, ''), dir]));
for (const [path, dir] of goDirs) {
  const names = execFileSync('git', ['-C', dir, 'ls-tree', '--name-only', 'HEAD', `${path}/`], { encoding: 'utf8' })
    .split('\n')
    .filter((f) => f.endsWith('.go') && !f.endsWith('_test.go') && !f.includes('generated'));
  const pkgProto = execFileSync('git', ['-C', dir, 'show', `HEAD:${path}/generated.proto`], { encoding: 'utf8' });
  const pkg = /^package\s+([\w.]+);/m.exec(pkgProto)[1];
  for (const name of names) {
    const text = execFileSync('git', ['-C', dir, 'show', `HEAD:${name}`], { encoding: 'utf8' });
    for (const m of text.matchAll(/^type\s+(\w+)\s+struct\s*\{([\s\S]*?)^\}/gm)) {
      for (const f of m[2].matchAll(/^\s*\w+\s+(\*?)[\w.[\]*]+\s+`[^`]*protobuf:"[^"]*name=(\w+)/gm))
        if (f[1]) pointers.add(`${pkg}.${m[1]}.${f[2]}`);
      // Embedded structs without a JSON name, whose fields JSON writes inline (Probe's ProbeHandler, Volume's VolumeSource, ...).
      for (const f of m[2].matchAll(/^\s*\*?[\w.]+\s+`json:"(,[^"]*)?"[^`]*protobuf:"[^"]*name=(\w+)/gm))
        inline.add(`${pkg}.${m[1]}.${f[2]}`);
    }
  }
}

const reached = new Set();
const todo = [...ROOTS];
while (todo.length) {
  const name = todo.pop();
  if (reached.has(name)) continue;
  const fields = messages.get(name);
  if (!fields) throw new Error(`message ${name} not found`);
  reached.add(name);
  for (const [, , type] of fields) {
    const inner = type.startsWith('map<') ? type.slice(4, -1).split(',') : [type];
    for (const t of inner) if (!SCALARS.has(t)) todo.push(t);
  }
}

const lines = [...reached].sort().map((name) => {
  const spec = messages
    .get(name)
    .map(
      ([f, n, t, rep]) =>
        `${f} ${n} ${t}${rep ? '*' : SCALARS.has(t) && pointers.has(`${name}.${f}`) ? '?' : inline.has(`${name}.${f}`) ? '^' : ''}`,
    )
    .join('|');
  return `  '${name}': '${spec}',`;
});
const out = `// Generated by scripts/gen-protobuf-schema.mjs from the generated.proto files of k8s.io/api (commit
// ${commits.get(apiDir)}) and k8s.io/apimachinery (commit ${commits.get(machineryDir)}): for each message the
// simulated API server decodes, its fields as "jsonName number type" separated by "|" (type: a scalar, a message's
// full name or map<key,value>; a trailing * marks a repeated field, ? a scalar that Go keeps as a pointer, so
// that its zero value is a value, ^ an embedded message whose fields JSON writes inline). Facts about the
// wire format only.
export const PROTOBUF_MESSAGES: Readonly<Record<string, string>> = {
${lines.join('\n')}
};
`;
writeFileSync(new URL('../sim/apiserver/protobuf-schema.ts', import.meta.url), out);
console.log(`${reached.size} messages`);
