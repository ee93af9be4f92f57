// What the AWS provider learns about the cluster from eks:DescribeCluster when the options leave it out,
// as Karpenter does: the API server endpoint (CLUSTER_ENDPOINT unset) and the service CIDR that AL2023's
// nodeadm needs (Karpenter reads it there too; here CLUSTER_CIDR can also set it).
import { DescribeClusterCommand, type EKSClient } from '@aws-sdk/client-eks';

export interface DiscoveredCluster {
  readonly endpoint?: string;
  readonly serviceCIDR?: string;
}

/** eks:DescribeCluster for `name`; throws naming the cluster and the permission when the call fails. */
export async function describeCluster(eks: Pick<EKSClient, 'send'>, name: string): Promise<DiscoveredCluster> {
  let out;
  try {
    out = await eks.send(new DescribeClusterCommand({ name }));
  } catch (e) {
    throw new Error(
      `eks:DescribeCluster for cluster ${name} failed (set --cluster-endpoint / CLUSTER_ENDPOINT, or allow eks:DescribeCluster): ${(e as Error).message}`,
      { cause: e },
    );
  }
  const c = out.cluster;
  const net = c?.kubernetesNetworkConfig;
  const cidr = net?.serviceIpv4Cidr ?? net?.serviceIpv6Cidr;
  return { ...(c?.endpoint ? { endpoint: c.endpoint } : {}), ...(cidr ? { serviceCIDR: cidr } : {}) };
}
