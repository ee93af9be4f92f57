// The pods/eviction subresource (policy/v1 Eviction), following pkg/registry/core/pod/storage/eviction.go:
//
// 1. A pod that is already terminating, finished, or still Pending is deleted without a budget check.
// 2. No matching budget: delete. More than one: 500, which the eviction API does not support.
// 3. A pod that is not Ready may go without using the budget when the budget allows it
//    (unhealthyPodEvictionPolicy AlwaysAllow, or IfHealthyBudget while the application is healthy).
// 4. Otherwise one disruption is taken from the budget (its status is recomputed first, so it is never
//    stale) and the pod is deleted; with none left the answer is 429 with upstream's message.
import { toKubeTime } from '../../controller/operator/clock.ts';
import { deleteObject, type DeleteOptions } from './deletion.ts';
import { errors, type Status } from './errors.ts';
import { budgetsFor, computePdbStatus, isPodReady, pdbSpec } from './pdb.ts';
import type { Registry } from './registry.ts';
import { isObject, type KObject } from './types.ts';

export const PDB_VIOLATION_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";
export const MULTIPLE_PDBS_MESSAGE =
  'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';

const success = (): Status => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });

export function evict(reg: Registry, namespace: string, name: string, body: unknown): Status {
  const pod = reg.get('pods', namespace, name);
  if (!isObject(body)) throw errors.badRequest('the body of an eviction must be a policy/v1 Eviction object');
  const meta = isObject(body.metadata) ? body.metadata : {};
  if (meta.name !== undefined && meta.name !== name)
    throw errors.badRequest(`name in URL does not match name in Eviction object (${name} vs ${String(meta.name)})`);
  const deleteOptions = (isObject(body.deleteOptions) ? body.deleteOptions : {}) as DeleteOptions;
  const remove = (): Status => {
    deleteObject(reg, 'pods', namespace, name, deleteOptions);
    return success();
  };

  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending')
    return remove();

  const budgets = budgetsFor(reg.store, pod);
  if (budgets.length === 0) return remove();
  if (budgets.length > 1) throw errors.internal(MULTIPLE_PDBS_MESSAGE);
  const pdb = budgets[0]!;
  const now = reg.clock.now();
  const status = computePdbStatus(reg.store, pdb, now);

  if (!isPodReady(pod)) {
    const policy = pdbSpec(pdb).unhealthyPodEvictionPolicy ?? 'IfHealthyBudget';
    if (policy === 'AlwaysAllow') return remove();
    if (status.currentHealthy >= status.desiredHealthy && status.desiredHealthy > 0) return remove();
  }
  if (status.disruptionsAllowed <= 0) {
    throw errors.tooManyRequests(PDB_VIOLATION_MESSAGE, [
      {
        reason: 'DisruptionBudget',
        message: `The disruption budget ${pdb.metadata.name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`,
      },
    ]);
  }
  const next: KObject = structuredClone(pdb);
  next.status = {
    ...status,
    disruptionsAllowed: status.disruptionsAllowed - 1,
    disruptedPods: { ...(status.disruptedPods ?? {}), [name]: toKubeTime(now) },
  };
  reg.updateStatus('poddisruptionbudgets.policy', namespace, pdb.metadata.name!, next);
  return remove();
}
