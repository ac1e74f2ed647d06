import { systemClock } from '../../../functions/core/clock.ts';
// KubeClient against the real API server: plain JSON both ways, discovery, conditional deletes.
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { apiErrorMessage, KubeClient, statusCodeOf } from '../../../functions/core/kube/client.ts';
import { waitForCrdsEstablished } from '../../../functions/core/kube/wait.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';
import { namespacedCrd } from '../../support/crd.ts';

const bed = testbed();
const kc = bed.kubeConfig();

function crd(group: string) {
  return namespacedCrd({
    group,
    kind: 'Dial',
    plural: 'dials',
    specProperties: {
      level: { type: 'integer', default: 3 },
      extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  });
}

describe('KubeClient', () => {
  it('applies a CRD as written: schema defaults and x-kubernetes-* fields are kept', async () => {
    const kube = new KubeClient(kc);
    const group = `${uniqueName('k')}.sluice.test`;
    await kube.apply(crd(group));
    const live = (await kube.get(crd(group))) as ReturnType<typeof crd>;
    const spec = live.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties;
    expect(spec.level).toEqual({ type: 'integer', default: 3 });
    expect(spec.extra).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('learns what is served once, and a CRD applied later in the same run', async () => {
    const kube = new KubeClient(kc);
    const group = `${uniqueName('k')}.sluice.test`;
    expect(await kube.resource('v1', 'ConfigMap')).toEqual({ namespaced: true });
    expect(await kube.resource('v1', 'Namespace')).toEqual({ namespaced: false });
    expect(await kube.resource('apps/v1', 'Deployment')).toEqual({ namespaced: true });
    expect(await kube.resource('v1', 'NoSuchKind')).toBeUndefined();
    expect(await kube.resource(`${group}/v1`, 'Dial')).toBeUndefined();
    await kube.apply(crd(group));
    await waitForCrdsEstablished(kube, [crd(group)], { clock: systemClock, timeoutMs: 30_000 });
    expect(await kube.resource(`${group}/v1`, 'Dial')).toEqual({ namespaced: true });
  });

  it('lists with a label selector, in one namespace or all, with apiVersion and kind set', async () => {
    const kube = new KubeClient(kc);
    const [a, b] = [uniqueName('ka'), uniqueName('kb')];
    const label = uniqueName('l');
    for (const ns of [a, b]) {
      await createNamespace(kc, ns);
      for (const name of ['one', 'two'])
        await kube.apply({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: ns, labels: { bench: label } },
        });
    }
    const all = await kube.list('v1', 'ConfigMap', `bench=${label}`);
    expect(all.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort()).toEqual(
      [`${a}/one`, `${a}/two`, `${b}/one`, `${b}/two`].sort(),
    );
    expect(all.every((o) => o.apiVersion === 'v1' && o.kind === 'ConfigMap')).toBe(true);
    expect(await kube.list('v1', 'ConfigMap', `bench=${label}`, a)).toHaveLength(2);
  });

  it('answers a refused request with the API server status and its message', async () => {
    const kube = new KubeClient(kc);
    const ns = uniqueName('ke');
    await createNamespace(kc, ns);
    const error = await kube
      .apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Not_Valid', namespace: ns } })
      .catch((e: unknown) => e);
    expect(statusCodeOf(error)).toBe(422);
    expect(apiErrorMessage(error)).toMatch(/Not_Valid/);
  });

  it('deletes only the object it was given by uid, and takes one already gone as deleted', async () => {
    const kube = new KubeClient(kc);
    const ns = uniqueName('kd');
    await createNamespace(kc, ns);
    const object: KubernetesObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: ns },
    };
    const first = await kube.apply(object);
    await kube.delete(first);
    const second = await kube.apply(object);
    const stale = await kube.delete(first, { uid: first.metadata?.uid }).catch((e: unknown) => e);
    expect(statusCodeOf(stale)).toBe(409);
    expect(await kube.get(object)).toMatchObject({ metadata: { uid: second.metadata?.uid } });
    await kube.delete(second, { uid: second.metadata?.uid });
    expect(await kube.get(object)).toBeUndefined();
    await expect(kube.delete(object)).resolves.toBeUndefined();
  });

  it('keeps many requests in flight at once', async () => {
    const kube = new KubeClient(kc);
    const ns = uniqueName('kc');
    await createNamespace(kc, ns);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        kube.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns } }),
      ),
    );
    const listed = await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: ns });
    expect(listed.items.filter((cm) => cm.metadata?.name?.startsWith('cm-'))).toHaveLength(40);
    kube.close();
  });
});
