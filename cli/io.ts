// Where a command writes. Commands take an Io so tests can capture output without spawning processes.
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** stdout is a terminal (colour, tables sized to it). */
  readonly isTTY: boolean;
  /** stderr is a terminal (progress bars). */
  readonly errIsTTY: boolean;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export function processIo(): Io {
  return {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    isTTY: Boolean(process.stdout.isTTY),
    errIsTTY: Boolean(process.stderr.isTTY),
    cwd: process.cwd(),
    env: process.env,
  };
}

/** An Io that records everything, for tests. */
export function memoryIo(
  opts: { cwd?: string; isTTY?: boolean; env?: Record<string, string> } = {},
): Io & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    out(t: string) {
      io.stdout += t;
    },
    err(t: string) {
      io.stderr += t;
    },
    isTTY: opts.isTTY ?? false,
    errIsTTY: false,
    cwd: opts.cwd ?? process.cwd(),
    env: opts.env ?? {},
  };
  return io;
}
