// A problem with what the user gave us (a file, an object in it, an option): printed as one or more lines
// without a stack trace, exit code 2.
export class InputError extends Error {
  override name = 'InputError';
}

/** A file-system error in words, with the path. */
export function fsProblem(path: string, e: unknown): InputError {
  const code = (e as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? 'no such file or directory'
      : code === 'EACCES'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a directory'
          : (e as Error).message;
  return new InputError(`${path}: cannot read: ${why}`);
}

/** A mistake in the command line: printed with the usage text. */
export class UsageError extends InputError {
  override name = 'UsageError';
}
