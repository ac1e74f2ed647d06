import type { KubernetesObject } from '@kubernetes/client-node';
import { keyedStableHash, stableHash } from '../manifests/hash.ts';
import type { ArtifactCrd, CustomResource } from '../manifests/crds.ts';
import { entryFor, type InventoryEntry } from '../manifests/inventory.ts';
import {
  describeObject,
  groupOf,
  OWNER_LABEL,
  settledNamespace,
  type Manifest,
} from '../manifests/objects.ts';
import { failValidation } from '../manifests/validate.ts';
import { pacer, type Pacer } from '../pacer.ts';
import { statusCodeOf, type KubeClient, type OwnedLists, type OwnerScope } from './client.ts';
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
  /** It holds decrypted values: the API server's messages about it are not quoted (they may quote them). */
  readonly sensitive: boolean;
}

/** Whether namespace `name` is known to be missing; a namespace it may not read counts as present. */
async function namespaceMissing(kube: KubeClient, name: string): Promise<boolean> {
  try {
    return (await kube.get({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })) === undefined;
  } catch (error) {
    if (statusCodeOf(error) === 403) return false;
    throw error;
  }
}

/**
 * The Namespaces the artifact declares that the cluster does not have yet: only objects in those
 * wait for the definitions stage. One that exists is not new: its objects are dry-run and their
 * ownership checked with the rest. One it may not read counts as new (checked after the stage).
 * The delivery's own Namespaces are found with one list (owner label); only the others are read
 * one by one.
 */
async function declaredNamespacesMissing(
  scope: OwnerScope,
  manifests: readonly Manifest[],
  listed: OwnedLists | undefined,
): Promise<Set<string | undefined>> {
  const { kube } = scope;
  const declared = manifests
    .filter(({ object }) => object.kind === 'Namespace' && object.apiVersion === 'v1')
    .map(({ object }) => object.metadata?.name);
  const names = [...new Set(declared)].filter((name): name is string => !!name);
  const owned = names.length > 1 ? await ownNamespaces(scope, listed) : new Set<string>();
  const found = await Promise.all(
    names.map((name) =>
      owned.has(name)
        ? true
        : kube.get({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }).then(
            (live) => live !== undefined,
            (error: unknown) => {
              if (statusCodeOf(error) !== 403) throw error;
              return false;
            },
          ),
    ),
  );
  return new Set(names.filter((_, i) => !found[i]));
}

/**
 * The Namespaces labelled as this delivery's (kept in `listed`, so the run's comparison does not
 * list them again); none when it may not list Namespaces.
 */
async function ownNamespaces(
  { kube, owner }: OwnerScope,
  listed: OwnedLists | undefined,
): Promise<Set<string>> {
  try {
    const live = await kube.list('v1', 'Namespace', `${OWNER_LABEL}=${owner}`);
    listed?.set('v1/Namespace', live);
    return new Set(live.map((namespace) => namespace.metadata?.name ?? ''));
  } catch (error) {
    if (statusCodeOf(error) === 403) return new Set();
    throw error;
  }
}

export interface PrepareOptions extends OwnerScope {
  readonly manifests: readonly Manifest[];
  /** The namespace of namespaced objects (else theirs, else `default`). */
  readonly targetNamespace?: string;
  /** Lets the event loop turn between objects. @default pacer() */
  readonly pacer?: Pacer;
  /** Where the lists it makes with the owner's selector are kept for the run's comparison. */
  readonly listed?: OwnedLists;
}

/**
 * Settles each manifest against the cluster's API: the kind must be served (or defined by a CRD
 * in the set, in a version it serves), namespaced objects get `targetNamespace` if set, else
 * `default` when they name none, cluster-scoped ones lose theirs; the owner label is stamped;
 * duplicates are refused. Custom resources of kinds not served yet cannot be dry-run before
 * their CRD is applied, so they are checked here instead, before any write: against their CRD's
 * schema, metadata rules, and that their namespace exists. Sorted in apply order.
 */
export async function prepareObjects({
  kube,
  owner: deliveryName,
  manifests,
  targetNamespace,
  pacer: pace = pacer(),
  listed,
}: PrepareOptions): Promise<DesiredObject[]> {
  // The CRD checks, and the Go regexp engine their patterns need, load only for an artifact that
  // defines CRDs: a chunk of their own in the Lambda bundle, off the cold start.
  const crdChecks = manifests.some(({ object }) => object.kind === 'CustomResourceDefinition')
    ? await import('../manifests/crds.ts')
    : undefined;
  const { crds, problems } = crdChecks?.artifactCrds(manifests) ?? {
    crds: new Map<string, ArtifactCrd>(),
    problems: [],
  };
  const newKindResources: (CustomResource & { readonly origin: string })[] = [];
  const missing = new Map<string, Promise<boolean>>();
  const newNamespaces = await declaredNamespacesMissing({ kube, owner: deliveryName }, manifests, listed);
  const served = new Map<string, Promise<{ namespaced: boolean } | undefined>>();
  const byId = new Map<string, DesiredObject>();

  for (const { object: raw, origin, hashKey } of manifests) {
    // Hashing 30 MiB of objects takes a second: the event loop turns (lease renewal) meanwhile.
    await pace.pause();
    const key = `${raw.apiVersion}/${raw.kind}`;
    if (!served.has(key)) served.set(key, kube.resource(raw.apiVersion!, raw.kind!));
    const servedInfo = await served.get(key);
    const crd = crdChecks && crds.get(crdChecks.crdKey(groupOf(raw.apiVersion!), raw.kind!));
    const versionProblem = crd && crdChecks.crdVersionProblem(raw, crd);
    if (versionProblem) {
      problems.push(`${origin}: ${describeObject(raw)}: ${versionProblem}`);
      continue;
    }
    const info = servedInfo ?? (crd && { namespaced: crd.namespaced });
    if (!info) {
      problems.push(
        `${origin}: ${describeObject(raw)}: kind ${raw.kind} is not served by the cluster in apiVersion ${raw.apiVersion}, and no CustomResourceDefinition in the artifact defines it`,
      );
      continue;
    }
    const metadata = { ...raw.metadata, labels: { ...raw.metadata?.labels, [OWNER_LABEL]: deliveryName } };
    if (info.namespaced) metadata.namespace = settledNamespace(raw.metadata?.namespace, targetNamespace);
    else delete metadata.namespace;
    const object = { ...raw, metadata } as KubernetesObject;
    const entry = entryFor(object);
    const duplicate = byId.get(entry.id);
    if (duplicate) {
      problems.push(`${origin}: ${describeObject(object)} is defined twice (also in ${duplicate.origin})`);
      continue;
    }
    const newKind = servedInfo === undefined;
    if (newKind && crd) {
      newKindResources.push({ object, crd, origin });
      const namespace = metadata.namespace;
      if (namespace && !newNamespaces.has(namespace)) {
        if (!missing.has(namespace)) missing.set(namespace, namespaceMissing(kube, namespace));
        if (await missing.get(namespace))
          problems.push(`${origin}: ${describeObject(object)}: namespaces "${namespace}" not found`);
      }
    }
    const deferred = newKind || newNamespaces.has(metadata.namespace);
    const hash = hashKey ? keyedStableHash(object, hashKey) : stableHash(object);
    byId.set(entry.id, { object, origin, entry, hash, deferred, sensitive: hashKey !== undefined });
  }
  crdChecks?.customResourceProblems(newKindResources).forEach((found, i) => {
    const { object, origin } = newKindResources[i]!;
    for (const problem of found) problems.push(`${origin}: ${describeObject(object)}: ${problem}`);
  });
  if (problems.length > 0) failValidation(problems);
  return [...byId.values()].sort((a, b) => compareApplyOrder(a.object, b.object));
}
