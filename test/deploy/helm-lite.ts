// A deliberately tiny renderer for the handful of Helm template constructs charts/karpenter-ts uses (no helm
// binary here): `{{ PATH }}`, `{{ PATH | quote }}`, `{{ required "msg" PATH | quote }}`,
// `{{- toYaml PATH | nindent N }}`, `{{- if PATH }}`/`{{- with PATH }}` ... `{{- end }}`, with `{{-`/`-}}`
// whitespace trimming. PATH is `.`, `.Values.a.b`, `.Release.Name|Namespace` or `.Chart.AppVersion`.
// Anything else throws, which keeps the templates this simple.
import { stringify } from 'yaml';

export interface RenderContext {
  readonly Values: unknown;
  readonly Release: { readonly Name: string; readonly Namespace: string };
  readonly Chart: { readonly AppVersion: string; readonly Name: string; readonly Version: string };
}

const ACTION = /\{\{(-?)\s*(.*?)\s*(-?)\}\}/gs;

function lookup(path: string, ctx: RenderContext, dot: unknown): unknown {
  if (path === '.') return dot;
  if (!/^(\.[A-Za-z0-9_]+)+$/.test(path)) throw new Error(`helm-lite: unsupported expression "${path}"`);
  let v: unknown = ctx;
  for (const part of path.slice(1).split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

const truthy = (v: unknown): boolean =>
  !(v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0));

function toYaml(v: unknown): string {
  return stringify(v ?? {}).replace(/\n$/, '');
}

function evaluate(expr: string, ctx: RenderContext, dot: unknown): string {
  const stages = expr.split('|').map((s) => s.trim());
  let value: unknown;
  const head = stages.shift()!;
  let m: RegExpExecArray | null;
  if ((m = /^required\s+"([^"]*)"\s+(\S+)$/.exec(head))) {
    value = lookup(m[2]!, ctx, dot);
    if (!truthy(value)) throw new Error(m[1]);
  } else if ((m = /^toYaml\s+(\S+)$/.exec(head))) {
    value = { yaml: toYaml(lookup(m[1]!, ctx, dot)) };
  } else {
    value = lookup(head, ctx, dot);
  }
  for (const stage of stages) {
    if (stage === 'quote') value = JSON.stringify(String(value ?? ''));
    else if ((m = /^nindent\s+(\d+)$/.exec(stage)) && typeof value === 'object' && value && 'yaml' in value) {
      const pad = ' '.repeat(Number(m[1]));
      value = '\n' + (value as { yaml: string }).yaml.split('\n').map((l) => pad + l).join('\n');
    } else throw new Error(`helm-lite: unsupported pipeline stage "${stage}"`);
  }
  if (typeof value === 'object' && value && 'yaml' in value) throw new Error('helm-lite: toYaml needs nindent');
  return String(value ?? '');
}

export function render(template: string, ctx: RenderContext): string {
  let out = '';
  // Each frame: whether output is on, and the value of `.`.
  const stack: Array<{ emit: boolean; dot: unknown }> = [{ emit: true, dot: ctx }];
  let last = 0;
  let trimNext = false;
  for (const m of template.matchAll(ACTION)) {
    let text = template.slice(last, m.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    const top = stack[stack.length - 1]!;
    if (top.emit) out += text;
    if (m[1] === '-' && top.emit) out = out.replace(/\s+$/, '');
    last = m.index + m[0].length;
    trimNext = m[3] === '-';
    const body = m[2]!;
    let c: RegExpExecArray | null;
    if ((c = /^(if|with)\s+(\S+)$/.exec(body))) {
      const v = lookup(c[2]!, ctx, top.dot);
      stack.push({ emit: top.emit && truthy(v), dot: c[1] === 'with' ? v : top.dot });
    } else if (body === 'end') {
      if (stack.length === 1) throw new Error('helm-lite: unbalanced end');
      stack.pop();
    } else if (top.emit) {
      out += evaluate(body, ctx, top.dot);
    }
  }
  if (stack.length !== 1) throw new Error('helm-lite: missing end');
  let tail = template.slice(last);
  if (trimNext) tail = tail.replace(/^\s+/, '');
  return out + tail;
}

/** Deep merge for values overrides (objects merge, everything else replaces). */
export function mergeValues(base: unknown, over: unknown): unknown {
  if (!over || typeof over !== 'object' || Array.isArray(over) || !base || typeof base !== 'object' || Array.isArray(base)) return over ?? base;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) out[k] = mergeValues(out[k], v);
  return out;
}
