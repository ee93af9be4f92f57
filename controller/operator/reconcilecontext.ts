// The keys controller-runtime puts on every log line of a reconcile (controllerGroup, controllerKind, the
// object as `{"NodeClaim":{"name":"x"}}`, namespace, name, reconcileID), carried through the reconcile's
// async calls with AsyncLocalStorage, so a line logged anywhere inside it has them. Singleton
// controllers (the provisioner, the disruption loop) reconcile no object: their lines carry empty
// namespace and name, as Karpenter's singleton reconcilers' do.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** The kind each per-object controller reconciles (keys are `name`, or `namespace/name` for pods). */
const RECONCILED_KINDS: Readonly<Record<string, { group: string; kind: string }>> = {
  'nodeclaim.lifecycle': { group: 'karpenter.sh', kind: 'NodeClaim' },
  'nodeclaim.termination': { group: 'karpenter.sh', kind: 'NodeClaim' },
  'nodeclaim.expiration': { group: 'karpenter.sh', kind: 'NodeClaim' },
  'nodeclaim.drift': { group: 'karpenter.sh', kind: 'NodeClaim' },
  'nodeclaim.consolidatable': { group: 'karpenter.sh', kind: 'NodeClaim' },
  'nodeclaim.podevents': { group: 'karpenter.sh', kind: 'NodeClaim' },
  'nodeclaim.consistency': { group: 'karpenter.sh', kind: 'NodeClaim' },
  'node.termination': { group: '', kind: 'Node' },
  'node.health': { group: '', kind: 'Node' },
  'nodepool.readiness': { group: 'karpenter.sh', kind: 'NodePool' },
  'nodepool.hash': { group: 'karpenter.sh', kind: 'NodePool' },
  'nodepool.counter': { group: 'karpenter.sh', kind: 'NodePool' },
  'nodeclass.status': { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass' },
  'metrics.pod': { group: '', kind: 'Pod' },
};

const scope = new AsyncLocalStorage<Record<string, unknown>>();

/** The fields of one reconcile of `controller` for `key`. */
function fieldsFor(controller: string, key: string): Record<string, unknown> {
  const k = RECONCILED_KINDS[controller];
  if (!k) return { namespace: '', name: '', reconcileID: randomUUID() };
  const slash = key.indexOf('/');
  const namespace = k.kind === 'Pod' && slash > 0 ? key.slice(0, slash) : '';
  const name = namespace ? key.slice(slash + 1) : key;
  return {
    controllerGroup: k.group,
    controllerKind: k.kind,
    [k.kind]: namespace ? { name, namespace } : { name },
    namespace,
    name,
    reconcileID: randomUUID(),
  };
}

/** Runs one reconcile with its log fields in scope. */
export function inReconcile<T>(controller: string, key: string, fn: () => Promise<T>): Promise<T> {
  return scope.run(fieldsFor(controller, key), fn);
}

/** The fields of the reconcile running now (pino's mixin), or none outside a reconcile. */
export function reconcileFields(): Record<string, unknown> {
  const s = scope.getStore();
  // A copy: pino merges each line's fields into what the mixin returns.
  return s ? { ...s } : {};
}
