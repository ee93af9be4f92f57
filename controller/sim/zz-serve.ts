import { startSimCluster } from './cluster.ts';
import { scaledClock } from './clock.ts';
const c = await startSimCluster({ clock: scaledClock(20), apiServer: { port: 38123 } });
c.kubelet.registerInstance({ providerID: 'aws:///us-east-1a/i-1', nodeName: 'ip-10-0-0-1', labels: { 'topology.kubernetes.io/zone': 'us-east-1a' }, capacity: { cpu: '4', memory: '16Gi', pods: '110' }, allocatable: { cpu: '3920m', memory: '15Gi', pods: '110' } });
c.api.create('nodeclaims', undefined, { metadata: { name: 'default-abc', labels: { 'node.kubernetes.io/instance-type': 'm5.large', 'karpenter.sh/capacity-type': 'spot', 'topology.kubernetes.io/zone': 'us-east-1a', 'karpenter.sh/nodepool': 'default' } }, spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } } });
console.log('ready', c.url);
setTimeout(() => c.close(), 60_000);
