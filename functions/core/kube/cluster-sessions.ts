import type { KubeConfig } from './client-node.ts';
import { DISCOVERY_TTL_MS, DiscoveryCache } from './discovery.ts';
import { ConnectionPool } from './transport.ts';

/** What the clients of one cluster share between runs: kept-alive connections and what discovery learned. */
export interface ClusterSession {
  readonly connections: ConnectionPool;
  readonly discovery: DiscoveryCache;
}

/**
 * Per cluster, the session a warm container keeps across runs, so that a run does not pay for a
 * TLS handshake and discovery that the previous run of the same cluster already paid for. Keyed by
 * what the connections are made with (server, CA, client certificate), not by token or impersonation,
 * which each request carries itself.
 */
export class ClusterSessions {
  private readonly sessions = new Map<string, ClusterSession>();

  constructor(
    private readonly discoveryTtlMs = DISCOVERY_TTL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  sessionFor(kubeConfig: KubeConfig): ClusterSession {
    const cluster = kubeConfig.getCurrentCluster();
    const user = kubeConfig.getCurrentUser();
    const key = JSON.stringify([
      cluster?.server,
      cluster?.caData,
      cluster?.caFile,
      cluster?.skipTLSVerify,
      user?.certData,
      user?.certFile,
      user?.keyFile,
    ]);
    let session = this.sessions.get(key);
    if (!session) {
      session = {
        connections: new ConnectionPool(),
        discovery: new DiscoveryCache(this.discoveryTtlMs, this.now),
      };
      this.sessions.set(key, session);
    }
    return session;
  }
}
