import type { Delivery } from '../config/index.ts';
import type { KubeClient, OwnedLists } from '../kube/client.ts';
import { prepareObjects, type DesiredObject } from '../kube/prepare.ts';
import { buildManifests } from '../manifests/build.ts';
import type { Manifest } from '../manifests/objects.ts';
import { isDigest, pullResolved, resolveArtifact, type Artifact } from '../oci/index.ts';
import { Taint } from '../taint.ts';
import type { ReconcileDeps } from './deps.ts';
import { step } from './guards.ts';

/**
 * Planning a revision, the steps a reconcile (apply-revision.ts), `sluice diff` (diff.ts) and the
 * check of shared objects (shared-objects.ts) share: pull exactly one revision, build it, settle
 * it against the cluster. Each fails with a SluiceError whose reason names its step.
 */

type PlanDeps = Pick<
  ReconcileDeps,
  | 'registryCredentials'
  | 'kubectl'
  | 'kustomizeMemoryBytes'
  | 'limits'
  | 'decryptor'
  | 'taint'
  | 'artifactCache'
  | 'kmsPublicKeys'
  | 'notation'
>;

/** What a delivery's source holds now, built and settled against its cluster. */
export interface PlannedRevision {
  /** The revision resolved (`<tag>@sha256:<hex>`, or `sha256:<hex>` for a digest source). */
  readonly revision: string;
  /** The manifest digest pulled: exactly the one `revision` names. */
  readonly digest: string;
  /** The objects that revision would apply (namespace settled, owner label stamped), in apply order. */
  readonly desired: readonly DesiredObject[];
}

/** The delivery's source pinned to `revision` (a tag or `sha256:<hex>`), or as configured. */
export function sourceAt(delivery: Delivery, revision: string | undefined): Delivery['source'] {
  if (revision === undefined) return delivery.source;
  const base = { ...delivery.source, tag: undefined, semver: undefined, digest: undefined };
  return isDigest(revision) ? { ...base, digest: revision } : { ...base, tag: revision };
}

/**
 * Resolves the source (or `revision`) once and pulls exactly the digest resolved, so a tag moved
 * meanwhile does not change what is planned.
 */
export async function pullRevision(delivery: Delivery, deps: PlanDeps, revision?: string): Promise<Artifact> {
  const source = sourceAt(delivery, revision);
  const credentials = deps.registryCredentials(source);
  const resolved = await step('ArtifactFailed', () =>
    resolveArtifact(source, { credentials, cache: deps.artifactCache }),
  );
  return step('ArtifactFailed', () =>
    pullResolved(source, resolved, {
      credentials,
      limits: deps.limits,
      cache: deps.artifactCache,
      kmsPublicKeys: deps.kmsPublicKeys,
      notation: deps.notation,
    }),
  );
}

/**
 * The artifact built (plain files or kustomize), the delivery's transforms applied, decrypted.
 * Every Secret it holds, decrypted or not, is tainted: the API server may quote any of them.
 */
export async function buildRevision(
  delivery: Delivery,
  artifact: Artifact,
  deps: PlanDeps,
): Promise<Manifest[]> {
  const manifests = await step('BuildFailed', () =>
    buildManifests(artifact.files, delivery, artifact.revision, {
      kubectl: deps.kubectl,
      kustomizeMemoryBytes: deps.kustomizeMemoryBytes,
      limits: deps.limits,
      decryptor: deps.decryptor,
      taint: deps.taint,
    }),
  );
  for (const manifest of manifests) deps.taint?.addSecret(manifest.object);
  return manifests;
}

/** The built objects settled against the cluster (namespaces, owner label, API discovery), in apply order. */
export function settleRevision(
  manifests: Manifest[],
  kube: KubeClient,
  delivery: Delivery,
  listed?: OwnedLists,
): Promise<DesiredObject[]> {
  return step('ValidationFailed', () =>
    prepareObjects({
      kube,
      owner: delivery.name,
      manifests,
      targetNamespace: delivery.targetNamespace,
      listed,
    }),
  );
}

/**
 * Plans a delivery's current revision without changing anything: pulls it, builds it and settles
 * the objects against `kube`, a client for the delivery's cluster. Gates, dependencies and the
 * delivery's inventory play no part. Its error holds none of the values it decrypted.
 */
export async function planRevision(
  delivery: Delivery,
  kube: KubeClient,
  deps: PlanDeps,
): Promise<PlannedRevision> {
  const taint = deps.taint ?? new Taint();
  try {
    const artifact = await pullRevision(delivery, deps);
    const built = await buildRevision(delivery, artifact, { ...deps, taint });
    const desired = await settleRevision(built, kube, delivery);
    return { revision: artifact.revision, digest: artifact.digest, desired };
  } catch (error) {
    throw taint.scrubError(error);
  }
}
