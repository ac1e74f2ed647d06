import type { KubernetesObject } from '@kubernetes/client-node';

/** The label that marks an object as created by a delivery; prune never touches objects without it. */
export const OWNER_LABEL = 'sluice.io/delivery';
/** `sluice.io/prune: disabled` keeps an object in the cluster when it leaves the artifact. */
export const PRUNE_ANNOTATION = 'sluice.io/prune';
/** `sluice.io/force: enabled` lets an immutable-field change recreate the object. */
export const FORCE_ANNOTATION = 'sluice.io/force';
/** `sluice.io/substitute: disabled` leaves an object's `${...}` text alone. */
export const SUBSTITUTE_ANNOTATION = 'sluice.io/substitute';

/**
 * The annotation `sluice.io/<name>`, or Flux's `kustomize.toolkit.fluxcd.io/<name>`, that `object`
 * has set to `value`, if any: artifacts made for Flux keep their meaning (`prune: disabled`,
 * `force: enabled`, `substitute: disabled`).
 */
export function annotationSetTo(
  object: KubernetesObject,
  sluiceAnnotation: string,
  value: string,
): string | undefined {
  const annotations = object.metadata?.annotations;
  const flux = sluiceAnnotation.replace(/^sluice\.io\//, 'kustomize.toolkit.fluxcd.io/');
  return [sluiceAnnotation, flux].find((key) => annotations?.[key] === value);
}

/** True when `object` has `sluice.io/<name>`, or Flux's spelling of it, set to `value`. */
export const annotatedAs = (object: KubernetesObject, sluiceAnnotation: string, value: string): boolean =>
  annotationSetTo(object, sluiceAnnotation, value) !== undefined;

/** An object from the artifact, with the file it came from (for error messages). */
export interface Manifest {
  readonly object: KubernetesObject & Record<string, unknown>;
  /** `deploy/app.yaml` or `deploy/app.yaml#2` for the third document of a file. */
  readonly origin: string;
  /**
   * Set on objects holding decrypted values: the key their inventory hash is keyed with, so the
   * hash stored in the table says nothing about the values to whoever can read the table.
   */
  readonly hashKey?: Buffer;
}

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/** The namespace a namespaced object is applied in: the delivery's `targetNamespace`, else its own, else `default`. */
export const settledNamespace = (
  namespace: string | undefined,
  targetNamespace: string | undefined,
): string => targetNamespace ?? (namespace || 'default');

/** `Kind/namespace/name` or `Kind/name`: how objects are named in messages. */
export function describeObject(object: KubernetesObject): string {
  const ns = object.metadata?.namespace;
  return `${object.kind}/${ns ? `${ns}/` : ''}${object.metadata?.name}`;
}
