// `karpenter-ts validate FILE...`: checks every NodePool, EC2NodeClass and NodeClaim in YAML/JSON files
// against Karpenter v1's rules (the same validator the simulated API server admits objects with).
// Prints one line per problem, `FILE:DOC: Kind/name: field: message`; exit 0 valid, 1 problems, 2 usage
// or unreadable files.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isValidatedObject, listItems, parseDocuments, validateObject, type FieldError } from '../../engine/index.ts';
import type { Io } from '../io.ts';

export const summary = 'check NodePool, EC2NodeClass and NodeClaim files against Karpenter v1 rules';

const USAGE = `usage: karpenter-ts validate FILE...

Checks every NodePool and NodeClaim (karpenter.sh/v1) and EC2NodeClass (karpenter.k8s.aws/v1) in the
given YAML or JSON files (multi-document, kubectl List output too) the way Karpenter v1.14's CRDs and
runtime validation would. Other kinds are skipped. Objects of older Karpenter APIs (v1beta1, Provisioner,
AWSNodeTemplate) are reported with the v1 fields that replace what they use.

Prints one line per problem:  FILE:DOC: Kind/name: field: message (line N)
DOC is the 1-based document number in the file.

exit status: 0 all valid, 1 problems found, 2 usage error or unreadable file

options:
  -h, --help   show this help
`;

interface Tally {
  objects: number;
  problems: number;
}

export async function run(args: string[], io: Io): Promise<number> {
  const files: string[] = [];
  let optionsDone = false;
  for (const a of args) {
    if (!optionsDone && (a === '-h' || a === '--help')) {
      io.out(USAGE);
      return 0;
    }
    if (!optionsDone && a === '--') optionsDone = true;
    else if (!optionsDone && a.startsWith('-') && a !== '-') {
      io.err(`karpenter-ts validate: unknown option "${a}"\n\n${USAGE}`);
      return 2;
    } else files.push(a);
  }
  if (files.length === 0) {
    io.err(`karpenter-ts validate: no files given\n\n${USAGE}`);
    return 2;
  }
  const tally: Tally = { objects: 0, problems: 0 };
  let unreadable = false;
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(resolve(io.cwd, file), 'utf8');
    } catch (e) {
      io.err(`karpenter-ts validate: cannot read ${file}: ${describe(e)}\n`);
      unreadable = true;
      continue;
    }
    validateText(file, text, io, tally);
  }
  const what = `${tally.objects} object${tally.objects === 1 ? '' : 's'}`;
  io.err(tally.problems === 0 ? `${what} checked, all valid\n` : `${what} checked, ${tally.problems} problem${tally.problems === 1 ? '' : 's'}\n`);
  if (unreadable) return 2;
  return tally.problems === 0 ? 0 : 1;
}

function validateText(file: string, text: string, io: Io, tally: Tally): void {
  const report = (doc: number, msg: string, line?: number): void => {
    tally.problems++;
    io.out(`${file}:${doc}: ${msg}${line === undefined ? '' : ` (line ${line})`}\n`);
  };
  for (const doc of parseDocuments(text)) {
    for (const e of doc.syntaxErrors) report(doc.index, `YAML syntax: ${e.message}`, e.line);
    if (doc.syntaxErrors.length > 0 || doc.value === undefined) continue;
    const entries = listItems(doc.value) ?? [{ value: doc.value, prefix: [] }];
    for (const { value, prefix } of entries) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        report(doc.index, 'is not a Kubernetes object (expected a map with apiVersion and kind)', doc.lineOf(prefix));
        continue;
      }
      const o = value as Record<string, unknown>;
      if (typeof o['apiVersion'] !== 'string' || typeof o['kind'] !== 'string') {
        report(doc.index, 'has no apiVersion and kind, so it cannot be checked', doc.lineOf(prefix));
        continue;
      }
      if (!isValidatedObject(o)) continue;
      tally.objects++;
      for (const e of validateObject(o)) report(doc.index, formatError(e), doc.lineOf([...prefix, ...e.segments]));
    }
  }
}

function formatError(e: FieldError): string {
  return e.path === '' ? `${e.object}: ${e.message}` : `${e.object}: ${e.path}: ${e.message}`;
}

function describe(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT': return 'no such file';
    case 'EISDIR': return 'it is a directory';
    case 'EACCES': return 'permission denied';
    default: return (e as Error).message;
  }
}
