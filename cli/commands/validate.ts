// `karpenter-ts validate FILE...`: checks every NodePool, EC2NodeClass and NodeClaim in YAML/JSON files
// against Karpenter v1's rules (the same validator the simulated API server admits objects with).
// Prints one line per problem, `FILE:DOC: Kind/name: field: message`; exit 0 valid, 1 problems, 2 usage
// or unreadable files. An unknown kind in a Karpenter API group (a typo such as `Nodepool`, or a group
// such as karpenter.sh.io) is a problem; any other kind is counted as skipped.
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  isValidatedObject,
  karpenterKindProblem,
  listItems,
  parseDocuments,
  safeText,
  validateObject,
  type FieldError,
  type PathSeg,
  type SourceDocument,
} from '../../engine/index.ts';
import type { Io } from '../io.ts';
import { countProblem, DEFAULT_LIMITS, inputLimits, LIMIT_VARS, sizeProblem, type InputLimits } from '../limits.ts';

export const summary = 'check NodePool, EC2NodeClass and NodeClaim files against Karpenter v1 rules';

const USAGE = `usage: karpenter-ts validate FILE...

Checks every NodePool and NodeClaim (karpenter.sh/v1) and EC2NodeClass (karpenter.k8s.aws/v1) in the
given YAML or JSON files (multi-document, kubectl List output too) the way Karpenter v1.14's CRDs and
runtime validation would. Objects of older Karpenter APIs (v1beta1, Provisioner, AWSNodeTemplate) are
reported with the v1 fields that replace what they use. An unknown kind in a Karpenter API group
(Nodepool, karpenter.sh.io/v1 NodePool) is a problem; other kinds are skipped and counted.

Prints one line per problem:  FILE:DOC: Kind/name: field: message (line N)
DOC is the 1-based document number in the file.

A file over ${DEFAULT_LIMITS.textBytes / 1024 / 1024} MiB (${LIMIT_VARS.textBytes}) or with more than
${DEFAULT_LIMITS.objects} objects (${LIMIT_VARS.objects}) is not read.

exit status: 0 all valid, 1 problems found, 2 usage error or a file that could not be read

options:
  -h, --help   show this help
`;

interface Tally {
  objects: number;
  problems: number;
  unreadable: number;
  readonly skipped: Map<string, number>;
}

/** The file arguments, or the exit code when the command line says to stop (help, a mistake). */
function readArgs(args: string[], io: Io): string[] | number {
  // Not strict: an unknown option is reported here, by its name as typed, rather than by parseArgs' message.
  const {
    values,
    positionals: files,
    tokens,
  } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  if (values.help === true) {
    io.out(USAGE);
    return 0;
  }
  const unknown = tokens.find((t) => t.kind === 'option' && t.name !== 'help');
  if (unknown?.kind === 'option') {
    io.err(`karpenter-ts validate: unknown option "${safeText(unknown.rawName)}"\n\n${USAGE}`);
    return 2;
  }
  if (files.length > 0) return files;
  io.err(`karpenter-ts validate: no files given\n\n${USAGE}`);
  return 2;
}

export async function run(args: string[], io: Io): Promise<number> {
  const files = readArgs(args, io);
  if (typeof files === 'number') return files;
  let limits: InputLimits;
  try {
    limits = inputLimits(io.env);
  } catch (e) {
    io.err(`karpenter-ts validate: ${(e as Error).message}\n`);
    return 2;
  }
  const tally: Tally = { objects: 0, problems: 0, unreadable: 0, skipped: new Map() };
  for (const file of files) {
    const text = await readWithin(file, io, limits);
    if (text === undefined) tally.unreadable++;
    else validateText(file, text, io, tally, limits);
  }
  io.err(`${verdict(tally)}\n`);
  if (tally.unreadable > 0) return 2;
  return tally.problems === 0 ? 0 : 1;
}

/** "3 objects checked, all valid" only when nothing went wrong; what was skipped after it. */
function verdict(t: Tally): string {
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const issues = [
    ...(t.problems ? [plural(t.problems, 'problem')] : []),
    ...(t.unreadable ? [`${plural(t.unreadable, 'file')} not read`] : []),
  ];
  const skipped = [...t.skipped]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${n} ${safeText(k)}`)
    .join(', ');
  return `${plural(t.objects, 'object')} checked, ${issues.length ? issues.join(', ') : 'all valid'}${skipped ? `; skipped (not Karpenter kinds): ${skipped}` : ''}`;
}

/** The file's text, or undefined after saying why it cannot be read (missing, too large). */
async function readWithin(file: string, io: Io, limits: InputLimits): Promise<string | undefined> {
  const path = resolve(io.cwd, file);
  try {
    const st = await stat(path);
    const tooBig = st.isFile() ? sizeProblem(st.size, 'text', limits) : undefined;
    if (tooBig) {
      io.err(`karpenter-ts validate: cannot read ${safeText(file)}: ${tooBig}\n`);
      return undefined;
    }
    return await readFile(path, 'utf8');
  } catch (e) {
    io.err(`karpenter-ts validate: cannot read ${safeText(file)}: ${describe(e)}\n`);
    return undefined;
  }
}

function validateText(file: string, text: string, io: Io, tally: Tally, limits: InputLimits): void {
  const report = (doc: number, msg: string, line?: number): void => {
    tally.problems++;
    io.out(`${safeText(file)}:${doc}: ${safeText(msg)}${line === undefined ? '' : ` (line ${line})`}\n`);
  };
  const docs = parseDocuments(text);
  const entries = docs.map((doc) => ({
    doc,
    items:
      doc.syntaxErrors.length > 0 || doc.value === undefined
        ? []
        : (listItems(doc.value) ?? [{ value: doc.value, prefix: [] }]),
  }));
  const tooMany = countProblem(
    entries.reduce((n, e) => n + e.items.length, 0),
    'objects',
    limits,
  );
  if (tooMany) {
    io.err(`karpenter-ts validate: cannot read ${safeText(file)}: ${tooMany}\n`);
    tally.unreadable++;
    return;
  }
  for (const { doc, items } of entries) {
    for (const e of doc.syntaxErrors) report(doc.index, `YAML syntax: ${e.message}`, e.line);
    for (const { value, prefix } of items) checkObject(doc, value, prefix, report, tally);
  }
}

function checkObject(
  doc: SourceDocument,
  value: unknown,
  prefix: PathSeg[],
  report: (doc: number, msg: string, line?: number) => void,
  tally: Tally,
): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    report(doc.index, 'is not a Kubernetes object (expected a map with apiVersion and kind)', doc.lineOf(prefix));
    return;
  }
  const o = value as Record<string, unknown>;
  if (typeof o['apiVersion'] !== 'string' || typeof o['kind'] !== 'string') {
    report(doc.index, 'has no apiVersion and kind, so it cannot be checked', doc.lineOf(prefix));
    return;
  }
  const unknown = isValidatedObject(o) ? undefined : karpenterKindProblem(o);
  if (unknown) {
    tally.objects++;
    report(doc.index, unknown, doc.lineOf([...prefix, 'kind']));
    return;
  }
  if (!isValidatedObject(o)) {
    tally.skipped.set(o['kind'], (tally.skipped.get(o['kind']) ?? 0) + 1);
    return;
  }
  tally.objects++;
  for (const e of validateObject(o)) report(doc.index, formatError(e), doc.lineOf([...prefix, ...e.segments]));
}

function formatError(e: FieldError): string {
  return e.path === '' ? `${e.object}: ${e.message}` : `${e.object}: ${e.path}: ${e.message}`;
}

function describe(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'it is a directory';
    case 'EACCES':
      return 'permission denied';
    default:
      return (e as Error).message;
  }
}
