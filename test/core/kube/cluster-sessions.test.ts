// What a warm container keeps per cluster between runs (ClusterSessions), counted on the wire
// through a proxy in front of the real API server: connections and discovery are shared for a
// while, and a question that guards a deletion is never answered from another run's discovery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../functions/core/kube/client.ts';
import { ClusterSessions } from '../../../functions/core/kube/cluster-sessions.ts';
import { startKubeFaultProxy, type KubeFaultProxy } from '../../support/kube-fault-proxy.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();
let proxy: KubeFaultProxy;
const discovery: string[] = [];

beforeAll(async () => {
  proxy = await startKubeFaultProxy(bed);
});
afterAll(() => proxy.close());

/** Counts the discovery requests (`/api`, `/apis`) the proxy forwards from now on. */
function countDiscovery(): void {
  discovery.length = 0;
  proxy.plan({
    beforeForward: async ({ url }) => {
      if (/^\/apis?(\?|$)/.test(url)) discovery.push(url);
    },
  });
}

describe('ClusterSessions', () => {
  it('lets the next run of a cluster use the discovery the previous run learned, until its TTL', async () => {
    let now = 0;
    const sessions = new ClusterSessions(30_000, () => now);
    const client = () =>
      new KubeClient(proxy.kubeConfig(), undefined, sessions.sessionFor(proxy.kubeConfig()));
    countDiscovery();
    expect(await client().resource('v1', 'ConfigMap')).toEqual({ namespaced: true });
    expect(discovery).toHaveLength(2);
    now += 10_000;
    expect(await client().resource('apps/v1', 'Deployment')).toEqual({ namespaced: true });
    expect(discovery).toHaveLength(2);
    now += 30_000;
    expect(await client().resource('v1', 'Service')).toEqual({ namespaced: true });
    expect(discovery).toHaveLength(4);
  });

  it('asks anew, whatever the TTL, for the kinds a Namespace deletion must look through', async () => {
    let now = 0;
    const sessions = new ClusterSessions(30_000, () => now);
    const session = sessions.sessionFor(proxy.kubeConfig());
    countDiscovery();
    await new KubeClient(proxy.kubeConfig(), undefined, session).resource('v1', 'ConfigMap');
    expect(discovery).toHaveLength(2);
    now += 1;
    const next = new KubeClient(proxy.kubeConfig(), undefined, session);
    expect((await next.namespacedKinds(['list', 'delete'])).map((k) => k.kind)).toContain('ConfigMap');
    expect(discovery).toHaveLength(4);
    // Within the same client, the answer it asked for serves again.
    await next.namespacedKinds(['list', 'delete']);
    expect(discovery).toHaveLength(4);
  });

  it('keeps one session per server and CA, whatever the token or impersonation', () => {
    const sessions = new ClusterSessions();
    const config = proxy.kubeConfig();
    const other = bed.kubeConfig();
    expect(sessions.sessionFor(config)).toBe(sessions.sessionFor(proxy.kubeConfig()));
    expect(sessions.sessionFor(config)).not.toBe(sessions.sessionFor(other));
  });
});
