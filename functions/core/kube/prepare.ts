import type { KubernetesObject } from '@kubernetes/client-node';
import { stableHash } from '../manifests/hash.ts';
import { entryFor, type InventoryEntry } from '../manifests/inventory.ts';
import { describeObject, groupOf, OWNER_LABEL, type Manifest } from '../manifests/objects.ts';
import { failValidation } from '../manifests/validate.ts';
import type { KubeClient } from './client.ts';
import { compareApplyOrder } from './stages.ts';

/** An object ready to apply: namespace settled, owner label stamped, with its inventory entry. */
export interface DesiredObject {
  readonly object: KubernetesObject;
  readonly origin: string;
  readonly entry: InventoryEntry;
  /** Hash of `object`; equal to the stored one when this exact object was applied before. */
  readonly hash: string;
  /** Its kind or namespace is created by this same artifact: dry-run only after the definitions stage. */
  readonly deferred: boolean;
}

interface CrdDefinition {
  readonly namespaced: boolean;
}

/** Kinds defined by CRDs in the set, keyed `apiVersion/kind`. */
function definedKinds(manifests: readonly Manifest[]): Map<string, CrdDefinition> {
  const kinds = new Map<string, CrdDefinition>();
  for (const { object } of manifests) {
    if (
      object.kind !== 'CustomResourceDefinition' ||
      groupOf(object.apiVersion ?? '') !== 'apiextensions.k8s.io'
    )
      continue;
    const spec = object.spec as
      | { group?: string; scope?: string; names?: { kind?: string }; versions?: { name?: string }[] }
      | undefined;
    for (const version of spec?.versions ?? []) {
      kinds.set(`${spec?.group}/${version.name}/${spec?.names?.kind}`, {
        namespaced: spec?.scope === 'Namespaced',
      });
    }
  }
  return kinds;
}

/**
 * Settles each manifest against the cluster's API: the kind must be served (or defined by a CRD
 * in the set), namespaced objects get `targetNamespace` if set, else `default` when they name
 * none, cluster-scoped
 * ones lose theirs; the owner label is stamped; duplicates are refused. Sorted in apply order.
 */
export async function prepareObjects(
  manifests: readonly Manifest[],
  kube: KubeClient,
  deliveryName: string,
  targetNamespace?: string,
): Promise<DesiredObject[]> {
  const crdKinds = definedKinds(manifests);
  const newNamespaces = new Set(
    manifests
      .filter(({ object }) => object.kind === 'Namespace' && object.apiVersion === 'v1')
      .map(({ object }) => object.metadata?.name),
  );
  const served = new Map<string, Promise<{ namespaced: boolean } | undefined>>();
  const problems: string[] = [];
  const byId = new Map<string, DesiredObject>();

  for (const { object: raw, origin } of manifests) {
    const key = `${raw.apiVersion}/${raw.kind}`;
    if (!served.has(key)) served.set(key, kube.resource(raw.apiVersion!, raw.kind!));
    const info = (await served.get(key)) ?? crdKinds.get(key);
    if (!info) {
      problems.push(
        `${origin}: ${describeObject(raw)}: kind ${raw.kind} is not served by the cluster in apiVersion ${raw.apiVersion}, and no CustomResourceDefinition in the artifact defines it`,
      );
      continue;
    }
    const metadata = { ...raw.metadata, labels: { ...raw.metadata?.labels, [OWNER_LABEL]: deliveryName } };
    if (info.namespaced) metadata.namespace = targetNamespace ?? (raw.metadata?.namespace || 'default');
    else delete metadata.namespace;
    const object = { ...raw, metadata } as KubernetesObject;
    const entry = entryFor(object);
    const duplicate = byId.get(entry.id);
    if (duplicate) {
      problems.push(`${origin}: ${describeObject(object)} is defined twice (also in ${duplicate.origin})`);
      continue;
    }
    const deferred = (await served.get(key)) === undefined || newNamespaces.has(metadata.namespace);
    byId.set(entry.id, { object, origin, entry, hash: stableHash(object), deferred });
  }
  if (problems.length > 0) failValidation(problems);
  return [...byId.values()].sort((a, b) => compareApplyOrder(a.object, b.object));
}
