// What the fit checks answer when a pod class version does not join a node or NodeClaim. When it does, they answer
// the node's or claim's requirement set with the pod added: a set id, >= 0.

/** Does not fit now; may later (a topology count can change, another domain can be picked). */
export const NOT_NOW: i32 = -1;
/**
 * Never fits here, for the rest of the solve: resources only grow, requirements only narrow, ports only fill,
 * anti-affinity only loses room. schedule.ts marks the node or claim dead for the version.
 */
export const NEVER: i32 = -2;
/** Only reserved capacity other claims hold stands in the way (Strict mode): not dead, an instance may come back. */
export const RESERVED: i32 = -3;
