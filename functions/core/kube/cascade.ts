// What deleting a CustomResourceDefinition or a Namespace takes with it: the API server deletes
// every object of the CRD's kind, and every object in the Namespace. A prune deletes one only when
// everything it holds goes anyway: objects the same run prunes, their garbage-collected
// dependents, and the furniture the control plane puts in every namespace.
import type { KubernetesObject } from '@kubernetes/client-node';
import { refOf, type InventoryEntry, type ObjectRef } from '../manifests/inventory.ts';
import { describeObject, groupOf, PRUNE_ANNOTATION } from '../manifests/objects.ts';
import { apiErrorMessage, statusCodeOf, type KubeClient, type OwnerScope } from './client.ts';
import { forEachBounded } from '../pacer.ts';
import { APPLY_CONCURRENCY } from './pool.ts';
import { reasonToKeep } from './prunable.ts';

/** A CRD or Namespace whose deletion would delete objects the run does not delete itself. */
export interface CascadeBlocker {
  /** `CustomResourceDefinition/<name>` or `Namespace/<name>`. */
  readonly container: string;
  /** What it holds that the run does not delete, as `Kind/namespace/name`, sorted. */
  readonly objects: readonly string[];
}

export interface Cascade {
  readonly blockers: readonly CascadeBlocker[];
  /**
   * Objects the CRDs and Namespaces take with them that are not themselves pruned: dependents
   * garbage-collected with a pruned owner. Namespace furniture is not counted.
   */
  readonly cascaded: readonly string[];
}

/**
 * A CRD or Namespace left in place (and in the inventory) because it holds objects the operation
 * does not delete; retried by later runs.
 */
export interface KeptContainer extends CascadeBlocker {
  /** Its inventory id. */
  readonly id: string;
}

/** Whether deleting the object deletes what it holds: a CustomResourceDefinition or a Namespace. */
export function isContainer(ref: Pick<ObjectRef, 'group' | 'kind'>): boolean {
  return (
    (ref.group === 'apiextensions.k8s.io' && ref.kind === 'CustomResourceDefinition') ||
    (ref.group === '' && ref.kind === 'Namespace')
  );
}

const SHOWN = 5;

/** `Namespace/a is kept: it holds 2 objects this operation does not delete: …`. */
export function describeKept(kept: CascadeBlocker): string {
  const count = kept.objects.length;
  const shown = kept.objects.slice(0, SHOWN).join(', ');
  const more = count > SHOWN ? `, and ${count - SHOWN} more` : '';
  return `${kept.container} is kept: it holds ${count} object${count === 1 ? '' : 's'} this operation does not delete: ${shown}${more}`;
}

/** What to do about a kept container, for every message that names one. */
export const KEPT_REMEDY =
  'It is deleted by a later run once it holds nothing else; to delete it sooner, delete or move what ' +
  'it holds (objects this delivery applies are pruned along with it when the revision leaves them out ' +
  `too); to keep it for good, annotate it ${PRUNE_ANNOTATION}: disabled`;

/** `kept Namespace/a: it holds …; … <remedy>`, or '' when nothing was kept. */
export function keptMessage(kept: readonly CascadeBlocker[]): string {
  if (kept.length === 0) return '';
  return `${kept.map(describeKept).join('; ')}. ${KEPT_REMEDY}`;
}

/** What findCascade looks at: the objects a prune of `owner`'s would delete. */
export interface CascadeOptions extends OwnerScope {
  /** What the prune would delete. */
  readonly stale: readonly InventoryEntry[];
  /** What the revision applies: never fine to lose. */
  readonly desired?: readonly InventoryEntry[];
  /** Looks at this container only, not at every one in `stale`. */
  readonly only?: InventoryEntry;
}

/**
 * Before a run changes anything: which CRDs and Namespaces among `stale` (what the run would
 * prune) hold objects the run does not prune, or objects `desired` (the revision) applies: those
 * are kept (not deleted, left in the inventory). `cascaded`: what the pruned CRDs and Namespaces
 * take with them besides `stale`, for the mass-deletion brake to count.
 */
export async function checkPruneCascade(
  options: CascadeOptions & { readonly desired: readonly InventoryEntry[] },
): Promise<{ readonly cascaded: readonly string[]; readonly kept: readonly KeptContainer[] }> {
  const { stale } = options;
  const { blockers, cascaded } = await findCascade(options);
  return { cascaded, kept: keptOf(stale, blockers) };
}

/** The blockers with the inventory ids of their containers. */
export function keptOf(
  entries: readonly InventoryEntry[],
  blockers: readonly CascadeBlocker[],
): KeptContainer[] {
  return blockers.flatMap((blocker) => {
    const entry = entries.find((e) => containerName(e) === blocker.container);
    return entry ? [{ ...blocker, id: entry.id }] : [];
  });
}

/** `Namespace/<name>` or `CustomResourceDefinition/<name>`, as describeObject names them. */
function containerName(entry: InventoryEntry): string | undefined {
  try {
    const ref = refOf(entry);
    return isContainer(ref) ? `${ref.kind}/${ref.name}` : undefined;
  } catch {
    return undefined;
  }
}

/** An object by group, kind, namespace and name, whatever its version. */
type ObjectKey = Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>;
const keyOf = ({ group, kind, namespace, name }: ObjectKey) => `${group}/${kind}/${namespace}/${name}`;
const objectKey = (object: KubernetesObject) =>
  keyOf({
    group: groupOf(object.apiVersion ?? ''),
    kind: object.kind ?? '',
    namespace: object.metadata?.namespace ?? '',
    name: object.metadata?.name ?? '',
  });
const describeRef = (ref: ObjectRef) => `${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;

/** What one CRD or Namespace holds. */
interface Held {
  readonly container: string;
  readonly objects: readonly KubernetesObject[];
  /** Objects of the revision that would be in it but are not there (yet). */
  readonly desired: readonly ObjectRef[];
  /** Why some of what it holds cannot be seen. */
  readonly unseen?: string;
}

/** Why an object that goes with its CRD or Namespace is fine to lose. */
type Verdict = 'pruned' | 'furniture' | 'dependent';

/**
 * For each CRD and Namespace among `stale` (or just `only`) that a prune would delete (it exists,
 * is not already being deleted, and is this delivery's without `sluice.io/prune: disabled`), what
 * it holds that would be lost with it. An object is fine to lose when it is in `stale` and prune
 * would delete it (compared by group, kind, namespace and name, whatever the version), when each
 * of its owners is (it is garbage-collected with them), or when it is namespace furniture (the
 * `default` ServiceAccount, the `kube-root-ca.crt` ConfigMap, Events, Endpoints and
 * EndpointSlices of a Service that goes). Objects of `desired` are never fine to lose.
 */
export async function findCascade(options: CascadeOptions): Promise<Cascade> {
  const { kube, owner: deliveryName, stale } = options;
  const staleRefs = stale.map(refOf);
  const containers = (options.only ? [refOf(options.only)] : staleRefs).filter(isContainer);
  if (containers.length === 0) return { blockers: [], cascaded: [] };
  const staleKeys = new Set(staleRefs.map(keyOf));
  const desired = (options.desired ?? []).map(refOf);
  const desiredKeys = new Set(desired.map(keyOf));

  const held: Held[] = [];
  for (const ref of containers) {
    const apiVersion = ref.kind === 'Namespace' ? 'v1' : 'apiextensions.k8s.io/v1';
    const live = await kube.get({ apiVersion, kind: ref.kind, metadata: { name: ref.name } });
    // Not deleted by the prune (gone, kept), or already being deleted with all it holds.
    if (!live || live.metadata?.deletionTimestamp || reasonToKeep(live, deliveryName)) continue;
    held.push(
      ref.kind === 'Namespace'
        ? await namespaceContents(kube, ref.name, desired)
        : await crdContents(kube, live, desired),
    );
  }

  const byUid = new Map<string, KubernetesObject>();
  const byKey = new Map<string, KubernetesObject>();
  for (const { objects } of held)
    for (const object of objects) {
      if (object.metadata?.uid) byUid.set(object.metadata.uid, object);
      byKey.set(objectKey(object), object);
    }
  const outside = await ownersElsewhere(kube, held, byUid);
  const verdicts = new Map<KubernetesObject, Verdict | undefined>();
  const judging = new Set<KubernetesObject>();

  const goes = (key: ObjectKey): boolean => {
    const object = byKey.get(keyOf(key));
    if (object) return judge(object) !== undefined;
    return staleKeys.has(keyOf(key));
  };
  const ownerGoes = (
    owner: { apiVersion: string; kind: string; name: string; uid: string },
    namespace: string,
  ) => {
    const live = byUid.get(owner.uid);
    if (live) return judge(live) !== undefined;
    // Not held here (cluster-scoped, or gone already): it goes only if the run really prunes it:
    // stale, this delivery's without prune: disabled, and no CRD or Namespace (which may be kept).
    const group = groupOf(owner.apiVersion);
    const stale =
      staleKeys.has(keyOf({ group, kind: owner.kind, namespace, name: owner.name })) ||
      staleKeys.has(keyOf({ group, kind: owner.kind, namespace: '', name: owner.name }));
    const found = outside.get(owner.uid);
    if (found === 'gone') return stale;
    if (found === undefined || found === 'unknown') return false;
    return (
      stale && reasonToKeep(found, deliveryName) === undefined && !isContainer({ group, kind: owner.kind })
    );
  };
  const isFurniture = (object: KubernetesObject): boolean => {
    const group = groupOf(object.apiVersion ?? '');
    const { kind } = object;
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    if (kind === 'Event') return group === '' || group === 'events.k8s.io';
    if (group === '' && kind === 'ServiceAccount') return name === 'default';
    if (group === '' && kind === 'ConfigMap') return name === 'kube-root-ca.crt';
    if (group === '' && kind === 'Endpoints') return goes({ group: '', kind: 'Service', namespace, name });
    if (group === 'discovery.k8s.io' && kind === 'EndpointSlice') {
      const service = object.metadata?.labels?.['kubernetes.io/service-name'];
      return service !== undefined && goes({ group: '', kind: 'Service', namespace, name: service });
    }
    return false;
  };
  const decide = (object: KubernetesObject): Verdict | undefined => {
    const key = objectKey(object);
    if (desiredKeys.has(key)) return undefined;
    if (staleKeys.has(key) && !reasonToKeep(object, deliveryName)) return 'pruned';
    if (isFurniture(object)) return 'furniture';
    const owners = object.metadata?.ownerReferences ?? [];
    const namespace = object.metadata?.namespace ?? '';
    if (owners.length > 0 && owners.every((owner) => ownerGoes(owner, namespace))) return 'dependent';
    return undefined;
  };
  function judge(object: KubernetesObject): Verdict | undefined {
    if (verdicts.has(object)) return verdicts.get(object);
    if (judging.has(object)) return undefined; // an ownership cycle proves nothing
    judging.add(object);
    const verdict = decide(object);
    judging.delete(object);
    verdicts.set(object, verdict);
    return verdict;
  }

  const blockers: CascadeBlocker[] = [];
  const cascaded = new Set<string>();
  for (const { container, objects, desired: missing, unseen } of held) {
    const lost: string[] = [];
    for (const object of objects) {
      const verdict = judge(object);
      const key = objectKey(object);
      if (verdict === undefined)
        lost.push(`${describeObject(object)}${desiredKeys.has(key) ? ' (in this revision)' : ''}`);
      else if (verdict === 'dependent' && !staleKeys.has(key)) cascaded.add(describeObject(object));
    }
    const seen = new Set(objects.map(objectKey));
    for (const ref of missing) if (!seen.has(keyOf(ref))) lost.push(`${describeRef(ref)} (in this revision)`);
    lost.sort();
    if (unseen) lost.push(unseen);
    if (lost.length > 0) blockers.push({ container, objects: lost });
  }
  return { blockers, cascaded: [...cascaded].sort() };
}

/** Every object of the CRD's kind, in all namespaces, and the revision's objects of that kind. */
async function crdContents(
  kube: KubeClient,
  crd: KubernetesObject,
  desired: readonly ObjectRef[],
): Promise<Held> {
  const spec = (crd as { spec?: { group?: string; names?: { kind?: string } } }).spec;
  const group = spec?.group ?? '';
  const kind = spec?.names?.kind ?? '';
  const container = describeObject(crd);
  const ofKind = desired.filter((ref) => ref.group === group && ref.kind === kind);
  const [apiVersion] = await kube.servedVersions(group, kind);
  if (!apiVersion) {
    const unseen = `any ${kind} objects (group ${group}): the CRD serves no version, so they cannot be listed`;
    return { container, objects: [], desired: ofKind, unseen };
  }
  try {
    return { container, objects: await kube.list(apiVersion, kind, ''), desired: ofKind };
  } catch (error) {
    // The kind is no longer served: the CRD is gone, and every object of it with it.
    if (statusCodeOf(error) === 404) return { container, objects: [], desired: ofKind };
    throw new Error(
      `cannot list the ${kind} objects that deleting ${container} would delete: ${apiErrorMessage(error)}`,
      { cause: error },
    );
  }
}

/** Every object in the namespace (of each kind that can be listed and deleted), and the revision's. */
async function namespaceContents(
  kube: KubeClient,
  namespace: string,
  desired: readonly ObjectRef[],
): Promise<Held> {
  const container = `Namespace/${namespace}`;
  const kinds = (await kube.namespacedKinds(['list', 'delete'])).filter(
    // Events are furniture: not worth listing.
    (served) => !(served.kind === 'Event' && ['', 'events.k8s.io'].includes(groupOf(served.apiVersion))),
  );
  const objects: KubernetesObject[] = [];
  await forEachBounded(kinds, APPLY_CONCURRENCY, async ({ apiVersion, kind }) => {
    try {
      objects.push(...(await kube.list(apiVersion, kind, '', namespace)));
    } catch (error) {
      // No longer served (its CRD was deleted since discovery was read, e.g. by this same prune):
      // no object of the kind exists any more, here or anywhere.
      if (statusCodeOf(error) === 404) return;
      throw new Error(
        `cannot list the ${kind} objects (${apiVersion}) that deleting ${container} would delete: ${apiErrorMessage(error)}`,
        { cause: error },
      );
    }
  });
  return { container, objects, desired: desired.filter((ref) => ref.namespace === namespace) };
}

/**
 * The live owners of held objects that are not held themselves (cluster-scoped owners), by uid:
 * the object, 'gone' when no object of that name and uid exists, 'unknown' when it cannot be read.
 */
async function ownersElsewhere(
  kube: KubeClient,
  held: readonly Held[],
  byUid: ReadonlyMap<string, KubernetesObject>,
): Promise<Map<string, KubernetesObject | 'gone' | 'unknown'>> {
  const owners = new Map<string, { apiVersion: string; kind: string; name: string; namespace?: string }>();
  for (const { objects } of held)
    for (const object of objects)
      for (const owner of object.metadata?.ownerReferences ?? [])
        if (!byUid.has(owner.uid) && !owners.has(owner.uid))
          owners.set(owner.uid, { ...owner, namespace: object.metadata?.namespace });
  const found = new Map<string, KubernetesObject | 'gone' | 'unknown'>();
  await forEachBounded(
    [...owners],
    APPLY_CONCURRENCY,
    async ([uid, { apiVersion, kind, name, namespace }]) => {
      try {
        const live = await kube.get({ apiVersion, kind, metadata: { name, namespace } });
        found.set(uid, live?.metadata?.uid === uid ? live : 'gone');
      } catch {
        found.set(uid, 'unknown');
      }
    },
  );
  return found;
}
