// The subset of OpenAPI v3 (as Kubernetes structural schemas use it) our CRDs are written in, plus the
// TypeScript twin of every CEL rule. The same data feeds two consumers:
// - scripts/gen-crds.ts renders it as CustomResourceDefinition YAML (openapi.ts toOpenApi drops `check`,
//   `hint` and `patternHint`, which exist only for us);
// - validate.ts evaluates it: types, required fields, patterns, bounds, enums, defaults, then each rule's
//   `check`, which must mean exactly what its CEL `rule` says.
import type { PathSeg } from '../errors.ts';

export interface Violation {
  /** Relative to the node the rule sits on. */
  readonly path: readonly PathSeg[];
  /** Overrides the rule's message (to name the offending value). */
  readonly message?: string;
}

export interface CelRule {
  /** CEL, written into the CRD's x-kubernetes-validations. */
  readonly rule: string;
  readonly message: string;
  /**
   * The rule in TypeScript. `self` is the (defaulted, type-checked) value at this node. Returns true when
   * the value passes, false for one violation at this node, or violations at sub-paths.
   */
  readonly check: (self: never) => boolean | readonly Violation[];
}

/** Rules comparing with the stored object (oldSelf): evaluated on updates only (validateUpdate). */
interface TransitionRule {
  readonly rule: string;
  readonly message: string;
  readonly transition: true;
  /** The rule in TypeScript; `oldSelf` is the stored value at the same path (only called when present). */
  readonly check: (self: never, oldSelf: never) => boolean;
}

type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

export interface Schema {
  readonly type?: SchemaType;
  readonly description?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  /** Map values (objects with arbitrary keys). */
  readonly additionalProperties?: Schema;
  readonly items?: Schema;
  readonly required?: readonly string[];
  readonly enum?: readonly (string | number)[];
  /** A Go RE2 / JS regex both engines read the same way (no lookarounds, no backreferences). */
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly maxProperties?: number;
  readonly format?: 'int32' | 'int64' | 'date-time' | 'byte';
  readonly default?: unknown;
  readonly nullable?: boolean;
  /** x-kubernetes-int-or-string: an integer or a string (quantities). */
  readonly intOrString?: boolean;
  /** x-kubernetes-preserve-unknown-fields: any content is kept and not checked. */
  readonly preserveUnknownFields?: boolean;
  readonly listType?: 'atomic' | 'set' | 'map';
  readonly listMapKeys?: readonly string[];
  readonly rules?: readonly (CelRule | TransitionRule)[];
  /** Ours only: words added to "required"/type messages, e.g. an example value. */
  readonly hint?: string;
  /** Ours only: plain words for a pattern mismatch, e.g. "must be a duration such as 30s, 5m or 1h30m". */
  readonly patternHint?: string;
}

export function isTransitionRule(r: CelRule | TransitionRule): r is TransitionRule {
  return 'transition' in r;
}

/** A printer column of `kubectl get`. */
interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'date' | 'boolean' | 'number';
  readonly jsonPath: string;
  readonly priority?: number;
  readonly description?: string;
}

export interface CrdDefinition {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  readonly shortNames?: readonly string[];
  readonly categories: readonly string[];
  readonly scope: 'Cluster' | 'Namespaced';
  readonly printerColumns: readonly PrinterColumn[];
  readonly description: string;
  readonly spec: Schema;
  readonly status: Schema;
  /** Whether spec must be present. */
  readonly specRequired: boolean;
  /** The scale subresource's paths (kubectl scale), when the kind has one. */
  readonly scale?: { readonly specReplicasPath: string; readonly statusReplicasPath: string };
}
