// planRevision: a delivery's current revision resolved, pulled, built and prepared, changing nothing.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../../../functions/core/kube/client.ts';
import { OWNER_LABEL } from '../../../functions/core/manifests/objects.ts';
import { planRevision } from '../../../functions/core/reconcile/plan.ts';
import { parseDelivery } from '../../../functions/core/config/index.ts';
import { engineDeps, pushFiles } from '../../support/deliveries.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();

/** A delivery spec for the local registry and cluster; planning needs no registration. */
const deliveryOf = (name: string, repository: string, fields: Record<string, unknown> = {}) =>
  parseDelivery({
    name,
    source: { url: `oci://${bed.registry.host}/${repository}`, tag: 'main', provider: 'aws' },
    cluster: { kubeconfig: bed.kube.kubeconfig },
    ...fields,
  });

describe('planRevision', () => {
  it('names the revision it resolved and the objects it would apply, settled as a reconcile settles them', async () => {
    const ns = uniqueName('plan');
    const repository = uniqueName('plan/app');
    const name = uniqueName('planned');
    const digest = await pushFiles(bed, repository, 'main', {
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  k: v\n',
      'role.yaml':
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n  namespace: ignored\nrules: []\n',
    });
    const delivery = deliveryOf(name, repository, { targetNamespace: ns });

    const planned = await planRevision(delivery, new KubeClient(bed.kubeConfig()), deps);
    expect(planned.revision).toBe(`main@${digest}`);
    expect(planned.digest).toBe(digest);
    expect(planned.desired.map((d) => d.entry.id)).toEqual([
      '_reader_rbac.authorization.k8s.io_ClusterRole',
      `${ns}_settings__ConfigMap`,
    ]);
    expect(planned.desired.every((d) => d.object.metadata?.labels?.[OWNER_LABEL] === name)).toBe(true);
    // Nothing was written: the target namespace was never even created.
    await expect(bed.kubeConfig().makeApiClient(CoreV1Api).readNamespace({ name: ns })).rejects.toMatchObject(
      {
        code: 404,
      },
    );
  });

  it('fails naming the step when the source cannot be resolved', async () => {
    const delivery = deliveryOf(uniqueName('unresolved'), uniqueName('plan/never-pushed'));
    await expect(planRevision(delivery, new KubeClient(bed.kubeConfig()), deps)).rejects.toMatchObject({
      reason: 'ArtifactFailed',
    });
  });
});
