// The AWS provider's side of nodeclaim.tagging (aws/karpenter-provider-aws v1.14.1,
// pkg/controllers/nodeclaim/tagging): once a NodeClaim's node has registered, its instance gets
// Name=<node name>, karpenter.sh/nodeclaim=<NodeClaim> and eks:eks-cluster-name=<cluster>, each only if the
// instance does not carry that key yet (a user's own Name is kept). The instance is read fresh (no cache)
// before writing, so a tag written meanwhile is not overwritten. The NodeClaim is then annotated
// karpenter.k8s.aws/tagged and compatibility.karpenter.k8s.aws/cluster-name-tagged.
import type { InstanceTagging, TagResult } from '../types.ts';
import { parseProviderID, type Instances } from './instance.ts';
import { EKS_CLUSTER_NAME_TAG, NODECLAIM_TAG } from './settings.ts';

const NAME_TAG = 'Name';
const TAGGED_ANNOTATION = 'karpenter.k8s.aws/tagged';
const CLUSTER_NAME_TAGGED_ANNOTATION = 'compatibility.karpenter.k8s.aws/cluster-name-tagged';

export function awsInstanceTagging(deps: {
  readonly instances: Instances;
  readonly clusterName: string;
}): InstanceTagging {
  return {
    taggedAnnotations: Object.freeze({ [TAGGED_ANNOTATION]: 'true', [CLUSTER_NAME_TAGGED_ANNOTATION]: 'true' }),
    async tag(claim): Promise<TagResult> {
      try {
        parseProviderID(claim.providerID);
      } catch (e) {
        return { kind: 'invalid', reason: (e as Error).message };
      }
      const inst = await deps.instances.describe(claim.providerID);
      const present = new Set((inst.Tags ?? []).flatMap((t) => (t.Key !== undefined ? [t.Key] : [])));
      const wanted: Record<string, string> = {
        [NAME_TAG]: claim.nodeName,
        [NODECLAIM_TAG]: claim.name,
        [EKS_CLUSTER_NAME_TAG]: deps.clusterName,
      };
      const tags = Object.fromEntries(Object.entries(wanted).filter(([k]) => !present.has(k)));
      if (!Object.keys(tags).length) return { kind: 'unchanged' };
      await deps.instances.tag(claim.providerID, tags);
      return { kind: 'tagged', tags };
    },
  };
}
