import { KubeConfig } from './client-node.ts';
import type { Impersonation } from '../config/index.ts';

/** The Kubernetes user name a delivery acts as: `system:serviceaccount:<namespace>:<name>` or the user. */
export function impersonatedUser(impersonation: Impersonation): string {
  return 'user' in impersonation
    ? impersonation.user
    : `system:serviceaccount:${impersonation.serviceAccount.namespace}:${impersonation.serviceAccount.name}`;
}

/**
 * A copy of `config` whose every request carries `Impersonate-User`, so the API server authorizes
 * it as that identity (sluice's own identity needs the `impersonate` verb on it). For a service
 * account the API server adds its groups (`system:serviceaccounts`, `system:serviceaccounts:<ns>`).
 */
export function impersonating(config: KubeConfig, impersonation: Impersonation | undefined): KubeConfig {
  if (!impersonation) return config;
  const context = config.getContextObject(config.getCurrentContext());
  const user = config.getCurrentUser();
  if (!context || !user)
    throw new Error('the cluster connection has no current context and user to impersonate with');
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: config.clusters,
    users: config.users.map((u) =>
      u === user ? { ...u, impersonateUser: impersonatedUser(impersonation) } : u,
    ),
    contexts: config.contexts,
    currentContext: context.name,
  });
  return copy;
}
