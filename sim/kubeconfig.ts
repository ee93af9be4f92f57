// A @kubernetes/client-node KubeConfig for the loopback API server (stack-notes §6), and the same as a
// kubeconfig file body for kubectl users of `karpenter-ts sim --serve`.
import { KubeConfig } from '@kubernetes/client-node';

export function kubeConfigFor(url: string, name = 'karpenter-ts-sim'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name, server: url, skipTLSVerify: true }],
    users: [{ name, token: 'sim' }],
    contexts: [{ name, cluster: name, user: name, namespace: 'default' }],
    currentContext: name,
  });
  return kc;
}

/** kubeconfig YAML (JSON is valid YAML) pointing kubectl at the simulator. */
export function kubeConfigText(url: string, name = 'karpenter-ts-sim'): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': name,
    // client-node refuses a plain-http server unless TLS verification is off; kubectl accepts either.
    clusters: [{ name, cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name, user: { token: 'sim' } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
  }, null, 2);
}
