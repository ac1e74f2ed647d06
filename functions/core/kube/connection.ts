import { KubeConfig } from './client-node.ts';

/** How sluice reaches a cluster: the same three things EKS gives (endpoint, CA, bearer token). */
export interface ClusterConnection {
  /** API server URL, e.g. https://ABC.gr7.eu-west-1.eks.amazonaws.com */
  readonly server: string;
  /** The cluster CA bundle, base64-encoded PEM (as in kubeconfig and DescribeCluster). */
  readonly caData: string;
  readonly token: string;
}

export function kubeConfigFor(connection: ClusterConnection, name = 'sluice'): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name, server: connection.server, caData: connection.caData, skipTLSVerify: false }],
    users: [{ name, token: connection.token }],
    contexts: [{ name, cluster: name, user: name }],
    currentContext: name,
  });
  return config;
}
