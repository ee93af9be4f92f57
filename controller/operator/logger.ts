// Structured JSON logs in Karpenter's shape (its zap configuration, pkg/operator/logging): `level` in upper
// case, `time` in ISO 8601, `logger: "controller"`, `message`, `commit`, and on every line written inside a
// reconcile the keys controller-runtime adds (`controller`, `controllerGroup`, `controllerKind`, the object as
// `{"NodeClaim":{"name":...}}`, `namespace`, `name`, `reconcileID`; see reconcilecontext.ts). Call sites
// may write our short keys; they leave as Karpenter's (`nodeclaim: x` -> `NodeClaim: {name: x}`,
// `providerID` -> `provider-id`, `err` -> `error`; KEY_NAMES below), so log queries and alerts written for
// Karpenter match. Lines go to LOG_OUTPUT_PATHS (stdout, stderr or files); problems writing them go to
// LOG_ERROR_OUTPUT_PATHS, as zap's error output.
import { createWriteStream, type WriteStream } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './options.ts';
import { reconcileFields } from './reconcilecontext.ts';
import { COMMIT } from './version.ts';

export type { Logger };

interface LoggerOptions {
  readonly level: LogLevel | 'silent';
  /** Where lines go; overrides outputPaths (tests, the simulator). */
  readonly destination?: DestinationStream;
  /** LOG_OUTPUT_PATHS: `stdout`, `stderr` or file paths (default stdout). */
  readonly outputPaths?: readonly string[];
  /** LOG_ERROR_OUTPUT_PATHS: where failures to write log lines are reported (default stderr). */
  readonly errorOutputPaths?: readonly string[];
  /** Time source for the `time` field (the simulator logs sim time). */
  readonly now?: () => number;
}

/** Our short keys and the names Karpenter's lines use for the same thing. */
const KEY_NAMES: Readonly<Record<string, string>> = {
  providerID: 'provider-id',
  instanceType: 'instance-type',
  instanceTypes: 'instance-types',
  capacityType: 'capacity-type',
  err: 'error',
  messageKind: 'messageKind',
};
/** Keys holding an object's name, written as Karpenter's object references (klog.KObj). */
const OBJECT_KEYS: Readonly<Record<string, string>> = {
  nodeclaim: 'NodeClaim',
  node: 'Node',
  nodepool: 'NodePool',
  ec2nodeclass: 'EC2NodeClass',
  pod: 'Pod',
};

/** `ns/name` or `name` as `{name, namespace}` / `{name}`. */
function objectRef(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const slash = value.indexOf('/');
  return slash > 0 ? { name: value.slice(slash + 1), namespace: value.slice(0, slash) } : { name: value };
}

/** Renames our keys to Karpenter's (formatters.log: runs on every line after the reconcile fields merge in). */
function karpenterKeys(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    const kind = OBJECT_KEYS[k];
    if (kind) out[kind] = objectRef(v);
    else out[KEY_NAMES[k] ?? k] = v;
  }
  return out;
}

function openPath(path: string): NodeJS.WritableStream {
  if (path === 'stdout') return process.stdout;
  if (path === 'stderr') return process.stderr;
  return createWriteStream(path, { flags: 'a' });
}

/** The LOG_OUTPUT_PATHS streams, each reporting its write failures to the error outputs. */
function outputs(paths: readonly string[], errorPaths: readonly string[]): DestinationStream {
  const errs = errorPaths.map(openPath);
  const report =
    (path: string) =>
    (e: Error): void => {
      const line = JSON.stringify({
        level: 'ERROR',
        time: new Date().toISOString(),
        logger: 'controller',
        message: 'writing log output failed',
        path,
        error: e.message,
      });
      for (const s of errs) s.write(`${line}\n`);
    };
  const streams = paths.map((p) => {
    const s = openPath(p);
    if (s !== process.stdout && s !== process.stderr) (s as WriteStream).on('error', report(p));
    return { stream: s as DestinationStream, level: 'trace' as const };
  });
  return streams.length === 1 ? streams[0]!.stream : pino.multistream(streams);
}

export function newLogger(opts: LoggerOptions): Logger {
  const now = opts.now;
  return pino(
    {
      level: opts.level,
      base: { logger: 'controller', commit: COMMIT },
      messageKey: 'message',
      mixin: reconcileFields,
      formatters: { level: (label) => ({ level: label.toUpperCase() }), log: karpenterKeys },
      ...(now
        ? { timestamp: () => `,"time":"${new Date(now()).toISOString()}"` }
        : { timestamp: pino.stdTimeFunctions.isoTime }),
    },
    opts.destination ??
      outputs(
        opts.outputPaths?.length ? opts.outputPaths : ['stdout'],
        opts.errorOutputPaths?.length ? opts.errorOutputPaths : ['stderr'],
      ),
  );
}

/** Instance type names as Karpenter logs them: the first five, then "and N other(s)". */
export function instanceTypeList(names: readonly string[]): string {
  const head = names.slice(0, 5).join(', ');
  return names.length > 5 ? `${head} and ${names.length - 5} other(s)` : head;
}
