// Any Kubernetes object (or a whole multi-document YAML/JSON text) -> the matching domain value, by kind.
// Lists (kind: List or *List, as `kubectl get -o yaml` prints) are expanded into their items.
import type { DaemonSet, NodePool, Pod, PodDisruptionBudget } from '../domain/types.ts';
import { parseEC2NodeClass, type EC2NodeClass } from './ec2nodeclass.ts';
import { fail, fieldError, isRecord, objectRef, ok, type FieldError, type PathSeg, type Result } from './errors.ts';
import { isLegacy } from './legacy.ts';
import { parseNode, type NodeInfo } from './node.ts';
import { parseNodeClaim, type NodeClaimInfo } from './nodeclaim.ts';
import { parseNodeOverlay, type NodeOverlay } from './nodeoverlay.ts';
import { parseNodePool, type NodePoolOptions } from './nodepool.ts';
import { parsePod, type PodOptions } from './pod.ts';
import { validateObject } from './validate.ts';
import { parseDaemonSet, parsePodDisruptionBudget } from './workloads.ts';
import { parseDocuments, type SourceDocument } from './yaml.ts';

export type ParsedObject =
  | { readonly kind: 'Pod'; readonly value: Pod }
  | { readonly kind: 'Node'; readonly value: NodeInfo }
  | { readonly kind: 'NodePool'; readonly value: NodePool }
  | { readonly kind: 'NodeClaim'; readonly value: NodeClaimInfo }
  | { readonly kind: 'EC2NodeClass'; readonly value: EC2NodeClass }
  | { readonly kind: 'NodeOverlay'; readonly value: NodeOverlay }
  | { readonly kind: 'DaemonSet'; readonly value: DaemonSet }
  | { readonly kind: 'PodDisruptionBudget'; readonly value: PodDisruptionBudget }
  /** Any other kind: kept as decoded, not judged. */
  | { readonly kind: 'Other'; readonly value: Readonly<Record<string, unknown>> };

type ParseOptions = PodOptions & NodePoolOptions;

const wrap = <K extends ParsedObject['kind'], V>(kind: K, r: Result<V>): Result<ParsedObject> =>
  r.ok ? ok({ kind, value: r.value } as unknown as ParsedObject) : fail(r.errors);

/** Parses one decoded object according to its apiVersion and kind. */
export function parseObject(obj: unknown, opts: ParseOptions = {}): Result<ParsedObject> {
  if (!isRecord(obj))
    return fail([
      fieldError(objectRef(obj), [], 'is not a Kubernetes object (expected a map with apiVersion and kind)'),
    ]);
  const av = obj['apiVersion'];
  if (isLegacy(obj)) return fail(validateObject(obj));
  switch (`${String(av)}/${String(obj['kind'])}`) {
    case 'v1/Pod':
      return wrap('Pod', parsePod(obj, opts));
    case 'v1/Node':
      return wrap('Node', parseNode(obj));
    case 'karpenter.sh/v1/NodePool':
      return wrap('NodePool', parseNodePool(obj, opts));
    case 'karpenter.sh/v1/NodeClaim':
      return wrap('NodeClaim', parseNodeClaim(obj));
    case 'karpenter.k8s.aws/v1/EC2NodeClass':
      return wrap('EC2NodeClass', parseEC2NodeClass(obj));
    case 'karpenter.sh/v1alpha1/NodeOverlay':
      return wrap('NodeOverlay', parseNodeOverlay(obj));
    case 'apps/v1/DaemonSet':
      return wrap('DaemonSet', parseDaemonSet(obj, opts));
    case 'policy/v1/PodDisruptionBudget':
      return wrap('PodDisruptionBudget', parsePodDisruptionBudget(obj));
    default:
      if (typeof av !== 'string' || typeof obj['kind'] !== 'string') {
        return fail([
          fieldError(objectRef(obj), typeof av !== 'string' ? ['apiVersion'] : ['kind'], 'is required but missing'),
        ]);
      }
      return ok({ kind: 'Other', value: obj });
  }
}

/** One object found in a text: where it came from and what it parsed to. */
interface TextEntry {
  /** 1-based document index in the stream. */
  readonly document: number;
  /** Index inside a List document, when the object came from one. */
  readonly item?: number;
  /** 1-based line where the object starts, when known. */
  readonly line?: number;
  /** The decoded object, as written. */
  readonly source: unknown;
  readonly result: Result<ParsedObject>;
}

/** Every object of a multi-document YAML or JSON text, with errors carrying their lines. Empty documents are skipped. */
export function parseText(text: string | readonly SourceDocument[], opts: ParseOptions = {}): TextEntry[] {
  const out: TextEntry[] = [];
  for (const doc of typeof text === 'string' ? parseDocuments(text) : text) {
    if (doc.syntaxErrors.length > 0) {
      const errors: FieldError[] = doc.syntaxErrors.map((e) => ({
        object: `document ${doc.index}`,
        path: '',
        segments: [],
        message: `YAML syntax: ${e.message}`,
        ...(e.line === undefined ? {} : { line: e.line }),
      }));
      out.push({ document: doc.index, line: doc.line, source: undefined, result: fail(errors) });
      continue;
    }
    if (doc.value === undefined) continue;
    const items = listItems(doc.value);
    const entries = items ?? [{ value: doc.value, prefix: [] as PathSeg[] }];
    entries.forEach((e, i) => {
      const r = parseObject(e.value, opts);
      const result: Result<ParsedObject> = r.ok
        ? r
        : fail<ParsedObject>(r.errors.map((err) => withLine(err, doc.lineOf([...e.prefix, ...err.segments]))));
      out.push({
        document: doc.index,
        ...(items ? { item: i } : {}),
        line: doc.lineOf(e.prefix),
        source: e.value,
        result,
      });
    });
  }
  return out;
}

function withLine(e: FieldError, line: number | undefined): FieldError {
  return line === undefined ? e : { ...e, line };
}

/** The items of a List document (kind List or FooList with an items array), else undefined. */
export function listItems(v: unknown): { value: unknown; prefix: PathSeg[] }[] | undefined {
  if (!isRecord(v) || typeof v['kind'] !== 'string' || !v['kind'].endsWith('List') || !Array.isArray(v['items']))
    return undefined;
  return v['items'].map((value, i) => ({ value, prefix: ['items', i] }));
}
