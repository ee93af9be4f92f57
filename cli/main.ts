// The `karpenter-ts` command: dispatches to cli/commands/<name>.ts, each exporting
// `run(args: string[], io: Io): Promise<number>` and a one-line `summary`.
import type { Io } from './io.ts';
import { processIo } from './io.ts';

const COMMANDS = ['validate', 'sim', 'whatif', 'snapshot', 'controller'] as const;

interface CommandModule {
  readonly summary: string;
  run(args: string[], io: Io): Promise<number>;
}

async function load(name: string): Promise<CommandModule | undefined> {
  if (!(COMMANDS as readonly string[]).includes(name)) return undefined;
  try {
    return (await import(`./commands/${name}.ts`)) as CommandModule;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String((e as Error).message).includes(`commands/${name}`)) return undefined;
    throw e;
  }
}

async function usage(io: Io): Promise<void> {
  const lines = ['usage: karpenter-ts <command> [options]', '', 'commands:'];
  for (const name of COMMANDS) {
    const mod = await load(name);
    if (mod) lines.push(`  ${name.padEnd(12)}${mod.summary}`);
  }
  lines.push('', 'Run `karpenter-ts <command> --help` for the options of one command.');
  io.err(lines.join('\n') + '\n');
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    await usage(io);
    return name ? 0 : 2;
  }
  const mod = await load(name);
  if (!mod) {
    io.err(`karpenter-ts: unknown command "${name}"\n`);
    await usage(io);
    return 2;
  }
  return mod.run(rest, io);
}
