// Which fields sluice owns, and what a revision that drops a field does to the live object, on the
// real API server. docs/flux-parity.md ("Field ownership") says what is kept the same as Flux and
// what deliberately differs; `npm run parity` checks the same revisions against Flux itself.
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FIELD_MANAGER, KubeClient } from '../../../functions/core/kube/client.ts';
import { engineDeps, run } from '../../support/deliveries.ts';
import { appliedBy } from '../../support/managed-fields.ts';
import { deliveryOnOwnCluster } from '../../support/own-cluster.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const kube = new KubeClient(kc);
const deps = engineDeps();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a live object's fields, read by the assertions
type Live = KubernetesObject & Record<string, any>;

/** Revision 1 writes `strategy`, ports' `protocol: UDP` and two Secret keys; revision 2 drops them. */
function revision(ns: string, first: boolean) {
  const labels = { app: 'web' };
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: {
        selector: { matchLabels: labels },
        ...(first && { strategy: { type: 'Recreate' } }),
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: 'web',
                image: 'registry.k8s.io/pause:3.10',
                ports: [{ containerPort: 53, ...(first && { protocol: 'UDP' }) }],
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: ns },
      spec: { selector: labels, ports: [{ port: 53, ...(first && { protocol: 'UDP' }) }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'web', namespace: ns },
      stringData: first ? { kept: 'k', dropped: 'd' } : { kept: 'k' },
    },
  ];
}

describe('field ownership', () => {
  it('a revision that drops strategy, a port protocol and a Secret key: each returns to its default or goes, as with Flux', async () => {
    const ns = uniqueName('owned');
    await createNamespace(kc, ns);
    const { name, push } = await deliveryOnOwnCluster(deps, bed, 'owned');
    const [deployment, service, secret] = revision(ns, true) as unknown as [Live, Live, Live];
    const live = async (object: Live) => (await kube.get(object)) as Live;

    await push(...revision(ns, true));
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect((await live(deployment)).spec.strategy).toEqual({ type: 'Recreate' });
    expect((await live(service)).spec.ports).toMatchObject([{ port: 53, protocol: 'UDP' }]);
    // stringData is applied as data (as Flux applies it), so sluice owns the keys stored.
    expect(appliedBy(await live(secret), FIELD_MANAGER)).toEqual([
      'data.dropped',
      'data.kept',
      'metadata.labels.sluice.io/delivery',
    ]);

    await push(...revision(ns, false));
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    const [d, s, x] = [await live(deployment), await live(service), await live(secret)];
    // Dropped by sluice, defaulted again by the API server: what Flux's `strategy: {}` leads to too.
    expect(d.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
    });
    expect(d.spec.template.spec.containers[0].ports).toEqual([{ containerPort: 53, protocol: 'TCP' }]);
    expect(s.spec.ports).toEqual([{ port: 53, protocol: 'TCP', targetPort: 53 }]);
    expect(x.data).toEqual({ kept: Buffer.from('k').toString('base64') });
    // sluice owns the protocol it now sends, as Flux does, but not Flux's empty strategy and resources.
    expect(appliedBy(d, FIELD_MANAGER)).toEqual([
      'metadata.labels.sluice.io/delivery',
      'spec.selector',
      'spec.template.metadata.labels.app',
      'spec.template.spec.containers[name=web]',
      'spec.template.spec.containers[name=web].image',
      'spec.template.spec.containers[name=web].name',
      'spec.template.spec.containers[name=web].ports[containerPort=53,protocol=TCP]',
      'spec.template.spec.containers[name=web].ports[containerPort=53,protocol=TCP].containerPort',
      'spec.template.spec.containers[name=web].ports[containerPort=53,protocol=TCP].protocol',
    ]);
    expect(appliedBy(s, FIELD_MANAGER)).toEqual([
      'metadata.labels.sluice.io/delivery',
      'spec.ports[port=53,protocol=TCP]',
      'spec.ports[port=53,protocol=TCP].port',
      'spec.ports[port=53,protocol=TCP].protocol',
      'spec.selector',
    ]);
    expect(appliedBy(x, FIELD_MANAGER)).toEqual(['data.kept', 'metadata.labels.sluice.io/delivery']);
  });
});
