// How a solve treats Dynamic Resource Allocation (docs/karpenter/scheduling.md §2.10, §2.20), shared by every solver:
// - IgnoreDRARequests on (the default): pods with resource claims are not provisioned (each gets the DRA error)
//   and daemon pods with claims are left out of daemonset overhead; the rest is solved as usual.
// - IgnoreDRARequests off and some pod or daemon pod uses DRA: the solve needs the device allocation simulation,
//   which only the reference solver has; the wasm and pooled solvers hand such inputs to it (docs/solver.md).
import { hasDRA, IGNORED_DRA_REASON } from '../dra/allocator.ts';
import type { PodError, ProvisionInput, ProvisionPlan } from './types.ts';

type DraRoute =
  | { readonly kind: 'plain' }
  | { readonly kind: 'reference' }
  | { readonly kind: 'stripped'; readonly input: ProvisionInput; readonly errors: readonly PodError[] };

export function ignoresDRA(input: ProvisionInput): boolean {
  return input.options.ignoreDRARequests !== false;
}

export function draRoute(input: ProvisionInput): DraRoute {
  const pods = input.pods.some(hasDRA);
  const daemons = input.daemonSets.some((d) => hasDRA(d.pod));
  if (!pods && !daemons) return { kind: 'plain' };
  if (!ignoresDRA(input)) return { kind: 'reference' };
  const errors = input.pods.filter(hasDRA).map((p) => ({ uid: p.uid, reason: IGNORED_DRA_REASON }));
  return {
    kind: 'stripped',
    input: {
      ...input,
      pods: input.pods.filter((p) => !hasDRA(p)),
      daemonSets: input.daemonSets.filter((d) => !hasDRA(d.pod)),
    },
    errors,
  };
}

/** The plan of the stripped input with the DRA errors added. */
export function withDraErrors(plan: ProvisionPlan, errors: readonly PodError[]): ProvisionPlan {
  return errors.length ? { ...plan, unschedulable: [...plan.unschedulable, ...errors] } : plan;
}
