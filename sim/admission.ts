// The simulated API server's admission for Karpenter's kinds: the CRD schema, CEL rules and defaults
// (engine validateObject / validateUpdate / admit), so an invalid NodePool, NodeClaim or EC2NodeClass is
// refused with 422 naming the field, and stored objects carry their defaults as on a real cluster.
import { admit, validateObject, validateUpdate, type FieldError as EngineFieldError } from '../engine/index.ts';
import type { AdmissionRequest, ApiServer, FieldError } from './apiserver/index.ts';

const toSim = (e: EngineFieldError): FieldError => ({ field: e.path || 'metadata', message: e.message });

function karpenterAdmission(req: AdmissionRequest): FieldError[] {
  const errors = req.operation === 'CREATE' ? validateObject(req.object) : validateUpdate(req.oldObject, req.object);
  if (errors.length) return errors.map(toSim);
  if (req.subresource !== 'status') {
    const r = admit(req.object);
    if (r.ok && r.value['spec'] !== undefined) req.object['spec'] = r.value['spec'];
  }
  return [];
}

/** Installs the hook on nodepools, nodeclaims, ec2nodeclasses, nodeoverlays and capacitybuffers; returns what removes it. */
export function installAdmission(server: Pick<ApiServer, 'addValidator'>): () => void {
  const off = [
    'nodepools.karpenter.sh',
    'nodeclaims.karpenter.sh',
    'ec2nodeclasses.karpenter.k8s.aws',
    'nodeoverlays.karpenter.sh',
    'capacitybuffers.autoscaling.x-k8s.io',
  ].map((r) => server.addValidator(r, karpenterAdmission));
  return () => off.forEach((f) => f());
}
