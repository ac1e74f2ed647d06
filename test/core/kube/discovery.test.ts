import { systemClock } from '../../../functions/core/clock.ts';
// Discovery on the real API server, with aggregated discovery and without it (the answer a server
// older than 1.30 gives): the versions serving a kind, the namespaced kinds that can be listed and
// deleted, and a 404 that is not about the object never taken for "gone".
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../../../functions/core/kube/client.ts';
import { Discovery } from '../../../functions/core/kube/discovery.ts';
import { KubeTransport, type KubeRequest } from '../../../functions/core/kube/transport.ts';
import { waitForCrdsEstablished } from '../../../functions/core/kube/wait.ts';
import { namespacedCrd } from '../../support/crd.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();

/** A transport that asks for plain JSON only, as a server without aggregated discovery answers. */
class PlainTransport extends KubeTransport {
  override request<T>(req: KubeRequest): Promise<T> {
    return super.request({ ...req, accept: 'application/json' });
  }
}

describe.each([
  ['aggregated discovery', () => new Discovery(new KubeTransport(kc))],
  ['one request per group version', () => new Discovery(new PlainTransport(kc))],
])('Discovery, %s', (_how, make) => {
  it('names the versions serving a kind, preferred first', async () => {
    const discovery = make();
    expect(await discovery.servedVersions('autoscaling', 'HorizontalPodAutoscaler')).toEqual([
      'autoscaling/v2',
      'autoscaling/v1',
    ]);
    expect(await discovery.servedVersions('', 'ConfigMap')).toEqual(['v1']);
    expect(await discovery.servedVersions('apps', 'ConfigMap')).toEqual([]);
    expect(await discovery.servedVersions('nothing.sluice.test', 'Thing')).toEqual([]);
  });

  it('lists the namespaced kinds that can be listed and deleted, once each', async () => {
    const kinds = await make().namespacedKinds(['list', 'delete']);
    const names = kinds.map((k) => `${k.apiVersion} ${k.kind}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'v1 ConfigMap',
        'v1 Secret',
        'apps/v1 Deployment',
        'autoscaling/v2 HorizontalPodAutoscaler',
      ]),
    );
    expect(names).not.toContain('autoscaling/v1 HorizontalPodAutoscaler');
    // Cluster-scoped, or not deletable (bindings can only be created).
    expect(names).not.toContain('v1 Namespace');
    expect(names).not.toContain('v1 Binding');
    expect(kinds.every((k) => k.namespaced)).toBe(true);
  });

  it('sees a CRD version stop being served once it forgets what it learned', async () => {
    const kube = new KubeClient(kc);
    const discovery = make();
    const group = `${uniqueName('d')}.sluice.test`;
    const crd = namespacedCrd({ group, kind: 'Dial', plural: 'dials', specProperties: {} });
    await kube.apply(crd);
    await waitForCrdsEstablished(kube, [crd], { clock: systemClock, timeoutMs: 30_000 });
    const served = () => {
      discovery.forget();
      return discovery.servedVersions(group, 'Dial');
    };
    await expect.poll(served).toEqual([`${group}/v1`]);
    await kube.apply({
      ...crd,
      spec: { ...crd.spec, versions: [{ ...crd.spec.versions[0]!, served: false }] },
    });
    await expect.poll(served).toEqual([]);
  });
});

describe('KubeClient reads', () => {
  it('take only a NotFound naming the object as "not there"; a resource no longer served is an error', async () => {
    const kube = new KubeClient(kc);
    const ns = uniqueName('nf');
    await createNamespace(kc, ns);
    const group = `${uniqueName('nf')}.sluice.test`;
    const crd = namespacedCrd({ group, kind: 'Dial', plural: 'dials', specProperties: {} });
    await kube.apply(crd);
    await waitForCrdsEstablished(kube, [crd], { clock: systemClock, timeoutMs: 30_000 });
    const dial = { apiVersion: `${group}/v1`, kind: 'Dial', metadata: { name: 'd', namespace: ns } };
    await kube.apply(dial);
    expect(await kube.get({ ...dial, metadata: { name: 'missing', namespace: ns } })).toBeUndefined();

    // This client still believes v1 is served; the server no longer serves it.
    await new KubeClient(kc).apply({
      ...crd,
      spec: { ...crd.spec, versions: [{ ...crd.spec.versions[0]!, served: false }] },
    });
    const other = new KubeClient(kc);
    const served = () => {
      other.forgetDiscovery();
      return other.servedVersions(group, 'Dial');
    };
    await expect.poll(served).toEqual([]);
    await expect(kube.get(dial)).rejects.toThrow();
    await expect(kube.delete(dial)).rejects.toThrow();
  });
});
