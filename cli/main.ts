// The `karpenter-ts` command: dispatches to cli/commands/<name>.ts, each exporting
// `run(args: string[], io: Io): Promise<number>` and a one-line `summary`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Io } from './io.ts';
import { processIo } from './io.ts';
import { COMMIT, VERSION } from '../controller/operator/version.ts';

const COMMANDS = ['validate', 'sim', 'whatif', 'snapshot', 'controller'] as const;
type CommandName = (typeof COMMANDS)[number];

/** One line per command for --help, kept here so help loads no command (each module's `summary` says the same). */
export const SUMMARIES: Readonly<Record<CommandName, string>> = {
  controller: 'run the controller against a Kubernetes cluster (in-cluster, --kubeconfig or KUBECONFIG)',
  sim: "run the controller against a simulated cluster and cloud (the guide's demo by default)",
  whatif: 'what would the engine do with this cluster, and what would it cost (offline, batch)',
  snapshot: "write a cluster's nodes, pods, NodePools, NodeClaims, ... to a msgpack file for whatif",
  validate: 'check NodePool, EC2NodeClass and NodeClaim files against Karpenter v1 rules',
};

interface CommandModule {
  readonly summary: string;
  run(args: string[], io: Io): Promise<number>;
}

/** This module's own extension: `.ts` from source, `.js` compiled. */
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/**
 * The command's module beside this one (compiled: dist/cli/commands/<name>.js, an entry of the bundle). A URL,
 * not a template import() path, so that a bundler leaves the load to run time instead of bundling the folder.
 */
const commandUrl = (name: string): URL => new URL(`./commands/${name}${EXT}`, import.meta.url);

/** A command this build holds: the image leaves the simulator's `sim` out. */
const present = (name: string): boolean => existsSync(fileURLToPath(commandUrl(name)));

async function load(name: string): Promise<CommandModule | undefined> {
  if (!(COMMANDS as readonly string[]).includes(name) || !present(name)) return undefined;
  try {
    return (await import(commandUrl(name).href)) as CommandModule;
  } catch (e) {
    if (
      (e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
      String((e as Error).message).includes(`commands/${name}`)
    )
      return undefined;
    throw e;
  }
}

function usage(): string {
  const lines = ['usage: karpenter-ts <command> [options]', '', 'commands:'];
  for (const name of COMMANDS.filter(present)) lines.push(`  ${name.padEnd(12)}${SUMMARIES[name]}`);
  lines.push(
    '',
    'options:',
    '  -h, --help    this help',
    '  --version     the version and commit',
    '',
    'Run `karpenter-ts <command> --help` for the options of one command.',
  );
  return lines.join('\n') + '\n';
}

/** `karpenter-ts <version> (commit <sha>)`: what --version prints and the image is labelled with. */
function versionLine(): string {
  return `karpenter-ts ${VERSION}${COMMIT ? ` (commit ${COMMIT})` : ''}\n`;
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === 'version') {
    io.out(versionLine());
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    // Asked for: the help is the answer (stdout, 0). Not asked for: a usage error (stderr, 2).
    if (name) io.out(usage());
    else io.err(usage());
    return name ? 0 : 2;
  }
  const mod = await load(name);
  if (!mod) {
    io.err(`karpenter-ts: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  return mod.run(rest, io);
}
