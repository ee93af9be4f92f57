// What the controller asks of the Kubernetes API, derived from the code, and what the chart grants.
//
// * calledInCode(): every KubeClient call site in the controller's source (controller/, without the
//   simulator and tests) read as (API group, resource[/subresource], verb), plus list and watch for every
//   informer (state/feed.ts informers.add). A call whose kind is not a string literal, or a form the reader
//   does not know, is reported as a problem rather than skipped, so the table cannot fall behind the code.
// * requested(): the same triples from the simulated API server's request log of a real run.
// * chartRules(): the ClusterRole and the release-namespace Role of charts/karpenter-ts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { KINDS, type Kind } from '../../controller/operator/kube.ts';
import type { RequestRecord } from '../../sim/apiserver/index.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Call {
  readonly triple: string;
  readonly namespaced: boolean;
  readonly where: string;
}

const triple = (group: string, resource: string, verb: string): string => `${group}|${resource}|${verb}`;

/** Each method of controller/operator/kube.ts KubeClient and the verb it issues. */
const VERBS: Readonly<Record<string, string>> = {
  get: 'get',
  find: 'get',
  list: 'list',
  create: 'create',
  replace: 'update',
  patch: 'patch',
  patchStatus: 'patch',
  delete: 'delete',
};

/** Call sites whose kind is a variable, and where its values come from. */
const VARIABLE_KIND_SITES: Readonly<Record<string, string>> = {
  'controller/state/informers.ts:list': 'the kinds passed to informers.add (read below)',
};

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const rel = relative(ROOT, p);
    if (statSync(p).isDirectory()) {
      if (rel === join('controller', 'sim') || rel === join('controller', 'simulation')) continue;
      sourceFiles(p, out);
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** The argument list of the call whose "(" is at `open` (balanced parentheses, strings not special-cased). */
function argsAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

const kindTriple = (kind: Kind, verb: string, sub?: string): { triple: string; namespaced: boolean } => {
  const k = KINDS[kind];
  return { triple: triple(k.group, sub ? `${k.plural}/${sub}` : k.plural, verb), namespaced: k.namespaced };
};

export function calledInCode(): { calls: Call[]; problems: string[] } {
  const calls: Call[] = [];
  const problems: string[] = [];
  for (const file of sourceFiles(join(ROOT, 'controller'))) {
    const rel = relative(ROOT, file).split('\\').join('/');
    const text = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    const line = (at: number) => text.slice(0, at).split('\n').length;
    for (const m of text.matchAll(/\bkube\s*\.(\w+)\(/g)) {
      const method = m[1]!;
      const where = `${rel}:${line(m.index)}`;
      const args = argsAt(text, m.index + m[0].length - 1);
      if (method === 'serverVersion') continue; // GET /version: a non-resource URL every authenticated client may read
      if (method === 'withOwnRateLimit') continue; // no request: the same client with a token bucket of its own
      if (method === 'evict') {
        calls.push({ triple: triple('', 'pods/eviction', 'create'), namespaced: true, where });
        continue;
      }
      const verb = VERBS[method];
      if (!verb) {
        problems.push(`${where}: kube.${method}() is not a KubeClient call this reader knows`);
        continue;
      }
      if (method === 'patch' && /subresource\s*:/.test(args)) {
        problems.push(
          `${where}: kube.patch() with a subresource option; use patchStatus or teach test/deploy/rbac.ts the form`,
        );
        continue;
      }
      const literal = /^\s*'(\w+)'/.exec(args)?.[1];
      if (literal === undefined) {
        if (!VARIABLE_KIND_SITES[`${rel}:${method}`])
          problems.push(`${where}: kube.${method}() with a kind that is not a string literal`);
        continue;
      }
      if (!(literal in KINDS)) {
        problems.push(`${where}: kube.${method}('${literal}') names no kind of KINDS`);
        continue;
      }
      calls.push({ ...kindTriple(literal as Kind, verb, method === 'patchStatus' ? 'status' : undefined), where });
    }
    for (const m of text.matchAll(/\binformers\s*\.add\(\s*'(\w+)'/g)) {
      const where = `${rel}:${line(m.index)}`;
      for (const verb of ['list', 'watch']) calls.push({ ...kindTriple(m[1] as Kind, verb), where });
    }
  }
  return { calls, problems };
}

/** (group, resource[/subresource], verb) of the API server's request records; resource keys look like `nodeclaims.karpenter.sh`. */
export function requested(
  records: readonly RequestRecord[],
): Array<{ triple: string; namespace?: string; path: string }> {
  return records.flatMap((r) => {
    if (!r.verb || !r.resource) return [];
    const dot = r.resource.indexOf('.');
    const plural = dot < 0 ? r.resource : r.resource.slice(0, dot);
    const group = dot < 0 ? '' : r.resource.slice(dot + 1);
    return [
      {
        triple: triple(group, r.subresource ? `${plural}/${r.subresource}` : plural, r.verb),
        ...(r.namespace ? { namespace: r.namespace } : {}),
        path: `${r.method} ${r.path}`,
      },
    ];
  });
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const triplesOf = (rules: readonly Rule[]): Set<string> =>
  new Set(
    rules.flatMap((r) =>
      r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => triple(g, res, v)))),
    ),
  );

/**
 * A template whose rules are plain YAML read without its template logic: lines that are only an action go
 * (metadata helpers, the user's additionalClusterRoleRules, empty by default), other actions become "x".
 */
const withoutTemplateLogic = (text: string): string =>
  text
    .split('\n')
    .filter((line) => !/^\s*\{\{.*\}\}\s*$/.test(line))
    .join('\n')
    .replace(/\{\{[^}]*\}\}/g, 'x');

/** The ClusterRole's and the Role's rules, as written in the templates (both plain YAML). */
export function chartRules(): { clusterRole: Set<string>; role: Set<string> } {
  const dir = join(ROOT, 'charts', 'karpenter-ts', 'templates');
  const clusterRole = parse(withoutTemplateLogic(readFileSync(join(dir, 'clusterrole.yaml'), 'utf8'))) as {
    rules: Rule[];
  };
  const role = parse(withoutTemplateLogic(readFileSync(join(dir, 'role.yaml'), 'utf8').split(/^---$/m)[0]!)) as {
    rules: Rule[];
  };
  return { clusterRole: triplesOf(clusterRole.rules), role: triplesOf(role.rules) };
}
