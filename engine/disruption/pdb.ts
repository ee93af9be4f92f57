// PodDisruptionBudget matching: a PDB selects the pods of its own namespace that its selector matches.
import type { Pod, PodDisruptionBudget } from '../domain/types.ts';
import { selectorMatches } from '../scheduling/pods.ts';

/** The PDBs that select the pod (same namespace, selector match; an empty selector selects every pod). */
export function pdbsOf(pod: Pod, pdbs: readonly PodDisruptionBudget[]): PodDisruptionBudget[] {
  return pdbs.filter((b) => b.namespace === pod.namespace && selectorMatches(b.selector, pod.labels));
}
