// `karpenter-ts snapshot -o FILE`: lists the objects what-if needs from a cluster (a kubeconfig context, or
// the simulator's API server) and writes them as a versioned msgpack file (cli/whatif/format.ts).
import { KubeConfig } from '@kubernetes/client-node';
import { rename, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Io } from '../io.ts';
import { encodeSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION } from '../whatif/format.ts';
import { listCluster } from '../whatif/kube.ts';

export const summary = "write a cluster's nodes, pods, NodePools, NodeClaims, ... to a msgpack file for whatif";

const USAGE = `usage: karpenter-ts snapshot -o FILE [--kubeconfig FILE] [--context NAME] [--created-at TIME]

Lists Nodes, Pods, NodePools, NodeClaims, EC2NodeClasses, DaemonSets and PodDisruptionBudgets from the
cluster of the kubeconfig (default: $KUBECONFIG, else ~/.kube/config; the simulator's API server works
too) and writes them to FILE as a karpenter-ts msgpack snapshot (format version ${SNAPSHOT_VERSION}), for
\`karpenter-ts whatif FILE\`. --created-at records another time than now (a simulated cluster's clock).

The file carries no secrets and only its owner can read it (mode 0600): env values, container command
and args, secret volume items, EC2NodeClass userData, managedFields and the last-applied-configuration
annotation are left out (env names and valueFrom references stay).

exit status: 0 written; 1 the cluster could not be listed; 2 usage error or unwritable file
`;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  output: { type: 'string', short: 'o' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'created-at': { type: 'string' },
} as const;

/** The command line as parseArgs reads it (strict: an unknown option or a missing value is an Error). */
function parseOptions(args: string[]) {
  try {
    return parseArgs({ args, options: OPTIONS });
  } catch (e) {
    return e as Error;
  }
}

export async function run(args: string[], io: Io): Promise<number> {
  const parsed = parseOptions(args);
  if (parsed instanceof Error) {
    io.err(`karpenter-ts snapshot: ${parsed.message}\n\n${USAGE}`);
    return 2;
  }
  const { values } = parsed;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const { output: out, kubeconfig, context, 'created-at': createdAt } = values;
  if (createdAt !== undefined && Number.isNaN(Date.parse(createdAt))) {
    io.err(`karpenter-ts snapshot: --created-at: "${createdAt}" is not an ISO time\n`);
    return 2;
  }
  if (!out || kubeconfig === '' || context === '') {
    io.err(`karpenter-ts snapshot: ${!out ? '-o FILE is required' : 'an option has no value'}\n\n${USAGE}`);
    return 2;
  }
  const kc = new KubeConfig();
  try {
    const file = kubeconfig ?? io.env['KUBECONFIG'];
    if (file) kc.loadFromFile(resolve(io.cwd, file));
    else kc.loadFromDefault();
    if (context) kc.setCurrentContext(context);
  } catch (e) {
    io.err(`karpenter-ts snapshot: cannot load the kubeconfig: ${(e as Error).message}\n`);
    return 2;
  }
  const server = kc.getCurrentCluster()?.server;
  if (!server) {
    io.err('karpenter-ts snapshot: the kubeconfig has no current cluster\n');
    return 2;
  }
  let objects;
  try {
    objects = await listCluster(kc);
  } catch (e) {
    io.err(`karpenter-ts snapshot: listing ${server} failed: ${(e as Error).message}\n`);
    return 1;
  }
  const bytes = encodeSnapshot({
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    createdAt: createdAt !== undefined ? new Date(Date.parse(createdAt)).toISOString() : new Date().toISOString(),
    source: { server, context: kc.getCurrentContext() },
    objects,
  });
  try {
    await writePrivate(resolve(io.cwd, out), bytes);
  } catch (e) {
    io.err(`karpenter-ts snapshot: cannot write ${out}: ${(e as Error).message}\n`);
    return 2;
  }
  const counts = Object.entries(objects)
    .map(([k, v]) => `${v.length} ${k}`)
    .join(', ');
  io.err(`wrote ${out}: ${counts} from ${server}\n`);
  return 0;
}

/**
 * Writes a file only its owner can read (0600), replacing any file there: the bytes go to a new file
 * beside it, created 0600, which is then renamed over the target (a plain write would keep an existing
 * file's wider mode, and a reader could see it half written).
 */
async function writePrivate(path: string, bytes: Uint8Array): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, bytes, { mode: 0o600, flag: 'wx' });
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
