import type { Delivery } from '../config/index.ts';
import { DEFAULT_BUILD_LIMITS, type BuildLimits } from '../limits.ts';
import { applyPatchesAndImages } from './delivery-patches.ts';
import { decryptEncrypted, type Decryptor } from './encrypted.ts';
import { buildKustomization } from './kustomize-build.ts';
import { artifactDir, kustomizationIn } from './kustomization.ts';
import { loadManifests } from './load.ts';
import type { Manifest } from './objects.ts';
import { applyDeliveryTransforms } from './transform.ts';
import { checkRequiredFields } from './validate.ts';
import type { Taint } from '../taint.ts';

export interface BuildOptions {
  /** The kubectl binary whose `kustomize` builds kustomizations and delivery patches (default: `kubectl` on PATH). */
  readonly kubectl?: string;
  /** kustomize is killed past this resident memory. @default DEFAULT_KUSTOMIZE_MEMORY_BYTES (512 MiB) */
  readonly kustomizeMemoryBytes?: number;
  /** What the build may read and make. @default DEFAULT_BUILD_LIMITS */
  readonly limits?: BuildLimits;
  /** Decrypts SOPS-encrypted objects when the delivery has `decryption`. @default none: such objects fail the build */
  readonly decryptor?: Decryptor;
  /** Told every decrypted value, for the run to scrub from what it writes out. @default none */
  readonly taint?: Taint;
}

/**
 * Step 6 of a reconcile, in Flux's order: the delivery's path is built by kustomize when it holds a
 * kustomization (else every YAML/JSON file under it is read); then the delivery's `patches` and
 * `images`; then SOPS-encrypted objects are decrypted, in memory (kustomize, which works on files,
 * never sees a decrypted value; Flux decrypts there too); then `postBuild.substitute`; then
 * `commonMetadata`. (`targetNamespace` and the owner
 * label are set when the objects are prepared against the cluster.)
 */
export async function buildManifests(
  files: ReadonlyMap<string, Buffer>,
  delivery: Delivery,
  revision: string,
  options: BuildOptions = {},
): Promise<Manifest[]> {
  const limits = options.limits ?? DEFAULT_BUILD_LIMITS;
  const kustomize = {
    kubectl: options.kubectl ?? 'kubectl',
    timeoutMs: delivery.timeoutMs,
    maxOutputBytes: limits.maxManifestBytes,
    maxObjects: limits.maxObjects,
    maxMemoryBytes: options.kustomizeMemoryBytes,
  };
  const dir = artifactDir(delivery.path);
  const built = kustomizationIn(files, dir)
    ? await buildKustomization(files, dir, kustomize)
    : await loadManifests(files, delivery.path, revision, limits);
  checkRequiredFields(built);
  // Patches and images run kustomize on files: they see encrypted documents only.
  const patched = await applyPatchesAndImages(built, delivery, kustomize);
  const decrypted = await decryptEncrypted(patched, {
    files,
    delivery,
    decryptor: options.decryptor,
    taint: options.taint,
  });
  checkRequiredFields(decrypted);
  return applyDeliveryTransforms(decrypted, delivery);
}
