// The requirement check Karpenter applies to pods' node selectors and required affinity (the same rules
// as NodePool requirements: pkg/apis/v1 ValidateRequirement), returning words instead of field errors.
import type { NodeSelectorRequirement } from '../domain/types.ts';
import {
  labelKeyProblem,
  labelValueProblem,
  NORMALIZED_LABELS,
  restrictedLabelReason,
  WELL_KNOWN_LABELS,
  type LabelContext,
} from './labels.ts';
import { singleNonNegativeInt } from './schemas/common.ts';

export function requirementProblem(r: NodeSelectorRequirement, ctx: LabelContext): string | undefined {
  const key = NORMALIZED_LABELS[r.key] ?? r.key;
  const keyProblem = labelKeyProblem(key);
  if (keyProblem) return keyProblem;
  if (!WELL_KNOWN_LABELS.has(key)) {
    const restricted = restrictedLabelReason(key, ctx);
    if (restricted) return restricted;
  }
  for (const v of r.values) {
    const vp = labelValueProblem(v);
    if (vp) return vp;
  }
  if (r.operator === 'In' && r.values.length === 0) return 'operator In needs at least one value';
  if (['Gt', 'Lt', 'Gte', 'Lte'].includes(r.operator) && !singleNonNegativeInt(r.values)) {
    return `operator ${r.operator} needs exactly one value, a non-negative integer`;
  }
  return undefined;
}
