// The Flux side of a parity step: its objects, and waiting for the outcome of a reconcile.
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { Components } from '../../dev/components.ts';
import { timerSleep as sleep } from '../../functions/core/clock.ts';
import type { FluxControllers } from './controllers.ts';

/** The OCIRepository and Kustomization named `name`, with the scenario's Kustomization fields. */
export function fluxObjects(
  components: Components,
  flux: FluxControllers,
  name: string,
  settings: Record<string, unknown>,
): string {
  const metadata = { name, namespace: flux.namespace };
  return [
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'OCIRepository',
      metadata,
      spec: {
        interval: '60m',
        url: `oci://${components.registry.host}/parity/${name}`,
        ref: { tag: 'main' },
        insecure: true,
        secretRef: { name: flux.registrySecret },
      },
    },
    {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata,
      spec: { interval: '60m', sourceRef: { kind: 'OCIRepository', name }, ...settings },
    },
  ]
    .map((doc) => stringify(doc))
    .join('---\n');
}

interface Kustomization {
  metadata: { generation?: number };
  status?: {
    lastAttemptedRevision?: string;
    lastHandledReconcileAt?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      observedGeneration?: number;
    }[];
  };
}

export interface FluxOutcome {
  readonly ready: boolean;
  readonly reason: string;
  readonly message: string;
}

/**
 * Waits until Kustomization `name` has finished a reconcile of the revision ending in `digest`
 * (and, with `mark`, handled the reconcile requested with it): its Ready condition True or False,
 * not Unknown (in progress). Fails after `timeoutMs` naming the Kustomization and its conditions.
 */
export async function fluxOutcome(
  components: Components,
  flux: FluxControllers,
  name: string,
  wanted: { digest: string; mark?: string },
  timeoutMs = 180_000,
): Promise<FluxOutcome> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(components.kube.kubeconfig);
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const k = (await api.getNamespacedCustomObject({
      group: 'kustomize.toolkit.fluxcd.io',
      version: 'v1',
      namespace: flux.namespace,
      plural: 'kustomizations',
      name,
    })) as Kustomization;
    const status = k.status;
    const ready = status?.conditions?.find((c) => c.type === 'Ready');
    const settled =
      // A failed reconcile leaves status.observedGeneration as it was (-1 before a success): the condition's counts.
      ready?.observedGeneration === k.metadata.generation &&
      status?.lastAttemptedRevision?.endsWith(wanted.digest) === true &&
      (wanted.mark === undefined || status.lastHandledReconcileAt === wanted.mark) &&
      (ready?.status === 'True' || ready?.status === 'False');
    if (settled)
      return { ready: ready.status === 'True', reason: ready.reason ?? '', message: ready.message ?? '' };
    if (Date.now() > deadline)
      throw new Error(
        `Flux Kustomization ${flux.namespace}/${name} did not finish revision …${wanted.digest.slice(-12)}${wanted.mark ? ` for the reconcile requested at ${wanted.mark}` : ''} in ${timeoutMs / 1000}s: ${JSON.stringify(status ?? {})}`,
      );
    await sleep(200);
  }
}
