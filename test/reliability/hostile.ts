// The harness of the hostile-input tables: a delivery with a known good state, then one hostile
// or broken artifact per case, each checked to leave the cluster, the inventory and the last
// applied revision exactly as they were, with a status that names the problem.
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseDelivery } from '../../functions/core/config/index.ts';
import type { FailureReason } from '../../functions/core/errors.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { writesSince } from '../support/audit.ts';
import type { Components } from '../../dev/components.ts';
import { engineDeps, pushFiles, rawRegistry, run } from '../support/deliveries.ts';
import { createNamespace, uniqueName } from '../support/testbed.ts';

export const FLUX_CONFIG = 'application/vnd.cncf.flux.config.v1+json';
export const FLUX_LAYER = 'application/vnd.cncf.flux.content.v1.tar+gzip';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

/** How many ConfigMaps the good revision holds: enough for the default 50% prune limit to apply. */
export const GOOD_OBJECTS = 12;

export interface Hostile {
  readonly bed: Components;
  readonly deps: ReconcileDeps;
  readonly ns: string;
  readonly repository: string;
  readonly name: string;
  configMap(name: string, namespace?: string): string;
  /** Pushes under tag `main` a revision that would change the cluster if it got through. */
  pushChanged(): Promise<string>;
  /** Pushes `files` under tag `main` (the delivery's path is `deploy`). */
  push(files: Record<string, string>): Promise<string>;
  /** Pushes a hand-made layer under tag `main`, with a descriptor that may lie about it. */
  pushLayer(layer: Buffer, options?: { mediaType?: string; sizeDelta?: number }): Promise<void>;
}

export interface HostileCase {
  readonly name: string;
  /** Puts the hostile artifact in place. */
  readonly push: (h: Hostile) => Promise<unknown>;
  /** Overrides of the delivery's source for this case (url, tag, semver, digest). */
  readonly source?: (h: Hostile) => Record<string, unknown>;
  /** Other engine dependencies for this case (e.g. a failing ECR API). */
  readonly deps?: (h: Hostile) => ReconcileDeps;
  /** Set up before the run and undone after it (a fault in a proxy). */
  readonly around?: (h: Hostile) => () => void;
  /** @default 'Failed' */
  readonly outcome?: 'Failed' | 'Blocked';
  readonly reason: FailureReason;
  readonly message: RegExp;
}

/**
 * One describe block: a delivery reconciled to a good revision of GOOD_OBJECTS ConfigMaps, then
 * every case on it. `registryHost` is where the delivery pulls from (the registry, or a proxy).
 */
export function hostileSuite(
  title: string,
  setup: { bed: Components; kc: KubeConfig; registryHost: () => string },
  cases: readonly HostileCase[],
): void {
  const { bed, kc } = setup;
  const deps = engineDeps();
  const ns = uniqueName('hostile');
  const repository = uniqueName('hostile/app');
  const name = uniqueName('hostile');
  const configMap = (cmName: string, namespace = ns) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${cmName}\n  namespace: ${namespace}\ndata:\n  key: ${cmName}\n`;
  const good = Array.from({ length: GOOD_OBJECTS }, (_, i) => configMap(`app-${i}`));
  const push = (files: Record<string, string>) => pushFiles(bed, repository, 'main', files);

  const h: Hostile = {
    bed,
    deps,
    ns,
    repository,
    name,
    configMap,
    push,
    pushChanged: () => push({ 'deploy/app.yaml': [...good.slice(1), configMap('intruder')].join('---\n') }),
    async pushLayer(layer, options = {}) {
      const registry = rawRegistry(bed);
      const config = Buffer.from('{}');
      const configDigest = await registry.pushBlob(repository, config);
      const layerDigest = await registry.pushBlob(repository, layer);
      const manifest = {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: FLUX_CONFIG, digest: configDigest, size: config.length },
        layers: [
          {
            mediaType: options.mediaType ?? FLUX_LAYER,
            digest: layerDigest,
            size: layer.length + (options.sizeDelta ?? 0),
          },
        ],
      };
      await registry.putManifest(repository, 'main', Buffer.from(JSON.stringify(manifest)), OCI_MANIFEST);
    },
  };

  const register = (source: Record<string, unknown> = {}) =>
    putDelivery(
      deps.db,
      parseDelivery({
        name,
        source: {
          url: `oci://${setup.registryHost()}/${repository}`,
          tag: 'main',
          provider: 'aws',
          ...source,
        },
        cluster: { kubeconfig: bed.kube.kubeconfig },
        prune: true,
        path: 'deploy',
      }),
      new Date(),
    );

  async function clusterState(): Promise<string[]> {
    const core = kc.makeApiClient(CoreV1Api);
    const [cms, secrets, deployments] = await Promise.all([
      core.listNamespacedConfigMap({ namespace: ns }),
      core.listNamespacedSecret({ namespace: ns }),
      kc.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: ns }),
    ]);
    return [...cms.items, ...secrets.items, ...deployments.items]
      .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
      .sort();
  }

  describe(title, () => {
    let before: string[];
    let inventory: unknown;
    let revision: string | undefined;

    beforeAll(async () => {
      await createNamespace(kc, ns);
      await push({ 'deploy/app.yaml': good.join('---\n') });
      await register();
      const first = await run(name, deps);
      expect(first.outcome).toBe('Succeeded');
      revision = first.revision;
      before = await clusterState();
      inventory = await readInventory(deps.db, name);
      expect(inventory).toHaveLength(GOOD_OBJECTS);
    });

    it.each(cases)('$name', async (hostile) => {
      await hostile.push(h);
      if (hostile.source) await register(hostile.source(h));
      const undo = hostile.around?.(h);
      const since = new Date().toISOString();
      try {
        const result = await run(name, hostile.deps?.(h) ?? deps);
        expect(result).toMatchObject({
          outcome: hostile.outcome ?? 'Failed',
          reason: hostile.reason,
          message: expect.stringMatching(hostile.message),
        });
        const status = await getStatus(deps.db, name);
        expect(status).toMatchObject({ ready: false, reason: hostile.reason, lastAppliedRevision: revision });
        expect(status?.message).toBe(result.message);
        expect(await clusterState()).toEqual(before);
        expect(writesSince(bed, ns, since)).toEqual([]);
        expect(await readInventory(deps.db, name)).toEqual(inventory);
      } finally {
        undo?.();
        if (hostile.source) await register();
      }
    });
  });
}
