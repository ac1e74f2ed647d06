/**
 * Stands in for socks-proxy-agent in the Lambda bundles (lib/bundle-options.ts aliases it here).
 * @kubernetes/client-node imports it for kubeconfig clusters with a `socks5://` proxy-url, bringing
 * socks and ip-address along (about 60 KiB of bundle). sluice's transport makes its own agent
 * (functions/core/kube/transport.ts) and never goes through a kubeconfig proxy, so this is never used.
 */
export class SocksProxyAgent {
  constructor() {
    throw new Error('sluice does not connect to clusters through a SOCKS proxy (kubeconfig proxy-url)');
  }
}
