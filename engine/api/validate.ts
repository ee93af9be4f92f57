// The admission check for Karpenter's v1 kinds: what the simulated API server calls before it stores a
// NodePool, NodeClaim or EC2NodeClass, what `karpenter-ts validate` runs over files, and the first step
// of every parser of those kinds. One pass: prune nulls, apply the CRD defaults, check the CRD schema and
// its CEL rules (schemas/), then Karpenter's runtime checks (semantic.ts).
import { fail, isRecord, objectRef, ok, fieldError, type FieldError, type Result } from './errors.ts';
import { isLegacy, legacyErrors } from './legacy.ts';
import { applyDefaults, transitionErrors, validateSchema } from './openapi.ts';
import { CRDS, objectSchema } from './schemas/crds.ts';
import type { CrdDefinition } from './schemas/types.ts';
import { ec2NodeClassErrors, metadataErrors, nodeClaimErrors, nodePoolErrors } from './semantic.ts';

type ValidatedKind = 'NodePool' | 'NodeClaim' | 'EC2NodeClass' | 'NodeOverlay' | 'CapacityBuffer';

/** The CRD this object claims to be (matching apiVersion and kind), if it is one of ours. */
function crdFor(obj: unknown): CrdDefinition | undefined {
  if (!isRecord(obj)) return undefined;
  return CRDS.find((d) => obj['apiVersion'] === `${d.group}/${d.version}` && obj['kind'] === d.kind);
}

/** Whether validateObject has anything to say about this object (our kinds and their retired versions). */
export function isValidatedObject(obj: unknown): boolean {
  return isRecord(obj) && (crdFor(obj) !== undefined || isLegacy(obj));
}

const KARPENTER_KINDS: ReadonlyArray<{ readonly kind: string; readonly apiVersion: string }> = [
  { kind: 'NodePool', apiVersion: 'karpenter.sh/v1' },
  { kind: 'NodeClaim', apiVersion: 'karpenter.sh/v1' },
  { kind: 'EC2NodeClass', apiVersion: 'karpenter.k8s.aws/v1' },
  { kind: 'NodeOverlay', apiVersion: 'karpenter.sh/v1alpha1' },
];

/**
 * For an object that claims a Karpenter API group (any group with "karpenter" in it) or a Karpenter kind
 * under another group, yet is none of the kinds validated here (nor a retired one): what is wrong, with
 * the spelling Karpenter serves. Undefined for any other object (an unrelated kind, to be skipped).
 */
export function karpenterKindProblem(obj: Record<string, unknown>): string | undefined {
  if (isValidatedObject(obj)) return undefined;
  const apiVersion = String(obj['apiVersion'] ?? '');
  const kind = String(obj['kind'] ?? '');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const known = KARPENTER_KINDS.find((k) => k.kind.toLowerCase() === kind.toLowerCase());
  if (!/karpenter/i.test(group) && !known) return undefined;
  const served = KARPENTER_KINDS.map((k) => `${k.apiVersion} ${k.kind}`).join(', ');
  if (!known) return `unknown kind ${kind} in ${apiVersion}: Karpenter serves ${served}`;
  if (known.kind !== kind)
    return `unknown kind ${kind} in ${apiVersion}: did you mean ${known.apiVersion} ${known.kind}?`;
  return `${kind} is served as ${known.apiVersion}, not ${apiVersion}`;
}

/**
 * Validates and defaults a NodePool, NodeClaim or EC2NodeClass. Returns the object with CRD defaults
 * applied (disruption, budgets, expireAfter, metadataOptions, ...) or every problem found.
 */
export function admit(obj: unknown): Result<Record<string, unknown>> {
  const object = objectRef(obj);
  if (!isRecord(obj)) return fail([fieldError(object, [], 'is not an object')]);
  if (isLegacy(obj)) return fail(legacyErrors(obj, object));
  const def = crdFor(obj);
  if (!def) {
    return fail([
      fieldError(
        object,
        ['kind'],
        `expected NodePool or NodeClaim (karpenter.sh/v1) or EC2NodeClass (karpenter.k8s.aws/v1), got ${String(obj['kind'])} (${String(obj['apiVersion'])})`,
      ),
    ]);
  }
  const schema = objectSchema(def);
  const value = applyDefaults(schema, obj) as Record<string, unknown>;
  const errors = [...metadataErrors(value, object), ...validateSchema(schema, value, [], { object })];
  // Runtime checks are defensive about shapes; skip the ones whose field already has a schema error.
  const reported = new Set(errors.map((e) => e.path));
  errors.push(...kindErrors(def.kind as ValidatedKind, value, object).filter((e) => !reported.has(e.path)));
  return errors.length === 0 ? ok(value) : fail(errors);
}

function kindErrors(kind: ValidatedKind, value: Record<string, unknown>, object: string): FieldError[] {
  switch (kind) {
    case 'NodePool':
      return nodePoolErrors(value, object);
    case 'NodeClaim':
      return nodeClaimErrors(value, object);
    case 'EC2NodeClass':
      return ec2NodeClassErrors(value, object);
    // Its run-time checks are reported on the overlay's status, not refused (engine/api/nodeoverlay.ts).
    case 'NodeOverlay':
      return [];
    // A reference that does not resolve is reported on the buffer's status (ReadyForProvisioning=False).
    case 'CapacityBuffer':
      return [];
  }
}

/**
 * Admission of an update: everything validateObject checks on the new object, plus the CRD's transition
 * rules against the stored one (NodeClaim spec immutable, NodePool nodeClassRef group/kind immutable,
 * no switching between static and dynamic NodePools).
 */
export function validateUpdate(oldObj: unknown, newObj: unknown): FieldError[] {
  if (!isValidatedObject(newObj)) return [];
  const r = admit(newObj);
  const errors = r.ok ? [] : [...r.errors];
  const def = crdFor(newObj);
  if (!def || !isRecord(oldObj) || crdFor(oldObj) !== def) return errors;
  const schema = objectSchema(def);
  const ctx = { object: objectRef(newObj) };
  return [
    ...errors,
    ...transitionErrors(schema, applyDefaults(schema, newObj), applyDefaults(schema, oldObj), [], ctx),
  ];
}

/**
 * The admission hook: every problem with a NodePool, NodeClaim or EC2NodeClass (or an object of their
 * retired API versions); [] when it is valid or is some other kind, which we do not judge.
 */
export function validateObject(obj: unknown): FieldError[] {
  if (!isValidatedObject(obj)) return [];
  const r = admit(obj);
  return r.ok ? [] : [...r.errors];
}
