import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { Components } from '../../dev/components.ts';
import { timerSleep as sleep } from '../../functions/core/clock.ts';
import { kubectl } from '../kubectl.ts';
import type { FluxControllers } from './controllers.ts';

/** A long interval: during a measurement, only the reconciles the bench requests run. */
const IDLE_INTERVAL = '60m';

/**
 * Flux's equivalent of one sluice delivery: an OCIRepository on `<repository>:main` of the local
 * registry and a Kustomization of it with `prune: true`, both named `name`.
 */
export function fluxDeliveryYaml(
  components: Components,
  flux: FluxControllers,
  name: string,
  repository: string,
): string {
  return fluxDeliveryObjects(components, flux, name, repository)
    .map((doc) => stringify(doc))
    .join('---\n');
}

/** The OCIRepository and Kustomization of fluxDeliveryYaml, as objects. */
export function fluxDeliveryObjects(
  components: Components,
  flux: FluxControllers,
  name: string,
  repository: string,
) {
  const metadata = { name, namespace: flux.namespace };
  const source = {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'OCIRepository' as const,
    metadata,
    spec: {
      interval: IDLE_INTERVAL,
      url: `oci://${components.registry.host}/${repository}`,
      ref: { tag: 'main' },
      insecure: true,
      secretRef: { name: flux.registrySecret },
    },
  };
  const kustomization = {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization' as const,
    metadata,
    spec: {
      interval: IDLE_INTERVAL,
      path: './',
      prune: true,
      sourceRef: { kind: 'OCIRepository', name },
      timeout: '5m',
    },
  };
  return [source, kustomization];
}

/**
 * What `flux reconcile kustomization --with-source` asks for: both objects reconcile now. Returns
 * the request's mark, which a Kustomization echoes as `lastHandledReconcileAt` once it has run.
 */
export async function requestReconcile(
  components: Components,
  flux: FluxControllers,
  names: readonly string[],
  kubectlCache: string,
): Promise<string> {
  const at = new Date().toISOString();
  for (const kind of ['ocirepository', 'kustomization'])
    await kubectl(
      components,
      [
        'annotate',
        '--overwrite',
        '-n',
        flux.namespace,
        ...names.map((n) => `${kind}/${n}`),
        `reconcile.fluxcd.io/requestedAt=${at}`,
      ],
      kubectlCache,
    );
  return at;
}

interface KustomizationStatus {
  metadata: { name: string };
  status?: {
    lastAppliedRevision?: string;
    lastHandledReconcileAt?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/**
 * Waits until every named Kustomization is Ready at a revision ending in its wanted digest (or, with
 * no digest, has handled the reconcile requested at `handled`); fails naming the laggards.
 */
export async function waitForKustomizations(
  components: Components,
  flux: FluxControllers,
  wanted: ReadonlyMap<string, { digest?: string; handled?: string }>,
  timeoutMs = 600_000,
): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(components.kube.kubeconfig);
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const deadline = Date.now() + timeoutMs;
  let waiting = [...wanted.keys()];
  for (;;) {
    const list = (await api.listNamespacedCustomObject({
      group: 'kustomize.toolkit.fluxcd.io',
      version: 'v1',
      namespace: flux.namespace,
      plural: 'kustomizations',
    })) as { items: KustomizationStatus[] };
    const byName = new Map(list.items.map((k) => [k.metadata.name, k]));
    waiting = waiting.filter((name) => {
      const status = byName.get(name)?.status;
      const ready = status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      const want = wanted.get(name)!;
      const atRevision = want.digest === undefined || status?.lastAppliedRevision?.endsWith(want.digest);
      const handled = want.handled === undefined || status?.lastHandledReconcileAt === want.handled;
      return !(ready && atRevision && handled);
    });
    if (waiting.length === 0) return;
    if (Date.now() > deadline) {
      const first = byName.get(waiting[0]!)?.status;
      throw new Error(
        `Flux Kustomizations not ready after ${timeoutMs / 1000}s: ${waiting.slice(0, 5).join(', ')}${waiting.length > 5 ? ` and ${waiting.length - 5} more` : ''}; ${waiting[0]}: ${JSON.stringify(first?.conditions ?? [])}`,
      );
    }
    await sleep(100);
  }
}
