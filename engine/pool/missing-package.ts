// An optional package the engine loads on first use is not installed: the user's environment, not a bug. It travels
// from a worker by name (engine.worker.ts) and is made again on the calling thread (engine.ts, replyValue), so a
// command can tell it from an internal error and say which package to install.
export class MissingPackageError extends Error {
  override name = 'MissingPackageError';

  constructor(
    /** The package, as npm names it. */
    readonly packageName: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
