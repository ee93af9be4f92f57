// Structured JSON logs (pino). Each controller logs through a child carrying its name, as Karpenter's
// injection.WithControllerName does, so `jq 'select(.controller=="provisioner")'` follows one controller.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './options.ts';

export type { Logger };

export interface LoggerOptions {
  readonly level: LogLevel | 'silent';
  /** Where lines go; default stdout. */
  readonly destination?: DestinationStream;
  /** Time source for the `time` field (the simulator logs sim time). */
  readonly now?: () => number;
}

export function newLogger(opts: LoggerOptions): Logger {
  const now = opts.now;
  return pino(
    {
      level: opts.level,
      base: { logger: 'karpenter-ts' },
      messageKey: 'message',
      formatters: { level: (label) => ({ level: label }) },
      ...(now ? { timestamp: () => `,"time":"${new Date(now()).toISOString()}"` } : { timestamp: pino.stdTimeFunctions.isoTime }),
    },
    opts.destination,
  );
}

/**
 * Remembers the last value logged per key and says whether a new value differs, so a reconcile that
 * runs every few seconds logs a state once, when it changes (Karpenter's ChangeMonitor).
 */
export class ChangeMonitor {
  private readonly last = new Map<string, string>();

  hasChanged(key: string, value: unknown): boolean {
    const v = JSON.stringify(value);
    if (this.last.get(key) === v) return false;
    this.last.set(key, v);
    return true;
  }

  forget(key: string): void {
    this.last.delete(key);
  }
}
