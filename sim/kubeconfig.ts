// A @kubernetes/client-node KubeConfig for the loopback API server (docs/stack.md §6), and the same as a
// kubeconfig file body for kubectl users of `karpenter-ts sim --serve`. Both carry the server's bearer
// token (sim/apiserver refuses requests without it unless it was started with authentication off).
import { KubeConfig } from '@kubernetes/client-node';

/** Where the simulated API server listens, the token it wants (undefined: authentication off) and its CA (https). */
export interface SimEndpoint {
  readonly url: string;
  readonly token: string | undefined;
  readonly ca?: string | undefined;
}

const base64 = (pem: string): string => Buffer.from(pem, 'utf8').toString('base64');

export function kubeConfigFor(server: SimEndpoint, name = 'karpenter-ts-sim'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // client-node refuses a plain-http server unless TLS verification is off; over https it verifies the CA.
    clusters: [
      {
        name,
        server: server.url,
        ...(server.ca !== undefined ? { caData: base64(server.ca), skipTLSVerify: false } : { skipTLSVerify: true }),
      },
    ],
    users: [{ name, ...(server.token !== undefined ? { token: server.token } : {}) }],
    contexts: [{ name, cluster: name, user: name, namespace: 'default' }],
    currentContext: name,
  });
  return kc;
}

/** kubeconfig YAML (JSON is valid YAML) pointing kubectl at the simulator. */
export function kubeConfigText(server: SimEndpoint, name = 'karpenter-ts-sim'): string {
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': name,
      // kubectl sends the token over https only; client-node refuses plain http unless verification is off.
      clusters: [
        {
          name,
          cluster: {
            server: server.url,
            ...(server.ca !== undefined
              ? { 'certificate-authority-data': base64(server.ca) }
              : { 'insecure-skip-tls-verify': true }),
          },
        },
      ],
      users: [{ name, user: server.token !== undefined ? { token: server.token } : {} }],
      contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
    },
    null,
    2,
  );
}
