import type { Delivery } from '../config/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { prepareObjects, type DesiredObject } from '../kube/prepare.ts';
import { buildManifests } from '../manifests/build.ts';
import { pullResolved, resolveArtifact } from '../oci/index.ts';
import type { ReconcileDeps } from './deps.ts';
import { step } from './guards.ts';

/** What a delivery's source holds now, built and settled against its cluster. */
export interface PlannedRevision {
  /** The revision resolved (`<tag>@sha256:<hex>`, or `sha256:<hex>` for a digest source). */
  readonly revision: string;
  /** The manifest digest pulled: exactly the one `revision` names. */
  readonly digest: string;
  /** The objects that revision would apply (namespace settled, owner label stamped), in apply order. */
  readonly desired: readonly DesiredObject[];
}

/**
 * Plans a delivery's current revision without changing anything: resolves its source once, pulls
 * exactly that digest (a tag moved meanwhile does not change what is planned), builds it and
 * prepares the objects against `kube`, a client for the delivery's cluster. Gates, dependencies and
 * the delivery's inventory play no part. Fails with a SluiceError whose reason names the step.
 */
export async function planRevision(
  delivery: Delivery,
  kube: KubeClient,
  deps: Pick<ReconcileDeps, 'registryCredentials' | 'kubectl' | 'decryptor'>,
): Promise<PlannedRevision> {
  const credentials = deps.registryCredentials(delivery.source);
  const resolved = await step('ArtifactFailed', () => resolveArtifact(delivery.source, { credentials }));
  const artifact = await step('ArtifactFailed', () =>
    pullResolved(delivery.source, resolved, { credentials }),
  );
  const manifests = await step('BuildFailed', () =>
    buildManifests(artifact.files, delivery, resolved.revision, {
      kubectl: deps.kubectl,
      decryptor: deps.decryptor,
    }),
  );
  const desired = await step('ValidationFailed', () =>
    prepareObjects(manifests, kube, delivery.name, delivery.targetNamespace),
  );
  return { revision: resolved.revision, digest: artifact.digest, desired };
}
