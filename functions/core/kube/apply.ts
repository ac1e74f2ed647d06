import type { KubernetesObject } from '@kubernetes/client-node';
import { poll } from '../clock.ts';
import { SluiceError } from '../errors.ts';
import { isSubset, storedForm } from '../manifests/hash.ts';
import { entryFor } from '../manifests/inventory.ts';
import { annotatedAs, describeObject, FORCE_ANNOTATION, OWNER_LABEL } from '../manifests/objects.ts';
import { failValidation } from '../manifests/validate.ts';
import {
  apiErrorMessage,
  statusCodeOf,
  type KubeClient,
  type OwnedLists,
  type OwnerScope,
} from './client.ts';
import { forEachBounded } from '../pacer.ts';
import { APPLY_CONCURRENCY } from './pool.ts';
import type { DesiredObject } from './prepare.ts';
import { STAGES, stageOf } from './stages.ts';
import { waitForCrdsEstablished, type WaitOptions } from './wait.ts';

export { APPLY_CONCURRENCY };

export interface ChangeSet {
  readonly created: string[];
  readonly configured: string[];
  readonly unchanged: string[];
}

type KindRef = { apiVersion: string; kind: string; namespace?: string };

/** The kinds (and namespaces) of `desired`, for listing what is live of them. */
export function kindsOf(desired: readonly DesiredObject[]): KindRef[] {
  return desired.map(({ object }) => ({
    apiVersion: object.apiVersion!,
    kind: object.kind!,
    namespace: object.metadata?.namespace,
  }));
}

export interface ListOwnedOptions extends OwnerScope {
  /** The kinds (and namespaces) to list. */
  readonly kinds: Iterable<KindRef>;
}

/**
 * The live objects `owner` owns, by inventory id: one list request per kind, except the kinds in
 * `listed` (read before any write of this run), taken from there.
 */
export function listOwned({
  kube,
  owner,
  kinds,
  listed,
}: ListOwnedOptions & { readonly listed?: OwnedLists }): Promise<Map<string, KubernetesObject>> {
  return listLabelled(kube, kinds, `${OWNER_LABEL}=${owner}`, listed);
}

/** The live objects of these kinds that carry another delivery's owner label than `owner`'s, by inventory id. */
export function listOwnedByOthers({
  kube,
  owner,
  kinds,
}: ListOwnedOptions): Promise<Map<string, KubernetesObject>> {
  return listLabelled(kube, kinds, `${OWNER_LABEL},${OWNER_LABEL}!=${owner}`);
}

async function listLabelled(
  kube: KubeClient,
  kinds: Iterable<KindRef>,
  selector: string,
  listed?: OwnedLists,
): Promise<Map<string, KubernetesObject>> {
  const live = new Map<string, KubernetesObject>();
  const unique = new Map<
    string,
    { apiVersion: string; kind: string; namespaces: Set<string>; clusterScoped: boolean }
  >();
  for (const { apiVersion, kind, namespace } of kinds) {
    const key = `${apiVersion}/${kind}`;
    const entry = unique.get(key) ?? {
      apiVersion,
      kind,
      namespaces: new Set<string>(),
      clusterScoped: false,
    };
    if (namespace) entry.namespaces.add(namespace);
    else entry.clusterScoped = true;
    unique.set(key, entry);
  }
  await forEachBounded([...unique.values()], APPLY_CONCURRENCY, async (entry) => {
    const { apiVersion, kind, namespaces } = entry;
    if (!(await kube.resource(apiVersion, kind))) return;
    const list = { apiVersion, kind, selector, namespaces };
    const objects =
      listed?.get(`${apiVersion}/${kind}`) ??
      (!entry.clusterScoped && namespaces.size <= NAMESPACED_LISTS_UP_TO
        ? await listInNamespaces(kube, list)
        : await listVisible(kube, list));
    for (const object of objects) live.set(entryFor(object).id, object);
  });
  return live;
}

/**
 * A kind whose objects are all in this many namespaces or fewer is listed namespace by namespace:
 * a label selector is applied after the API server reads the objects, so a cluster-wide list reads
 * (and pages through) every object of the kind in the cluster, where a namespaced list reads that
 * namespace's. One, so that this never takes more requests than a cluster-wide list.
 */
export const NAMESPACED_LISTS_UP_TO = 1;

/**
 * All namespaces at once; when that is forbidden (an identity bound per namespace, see
 * `impersonate`), namespace by namespace, skipping those it may not list (and cluster-scoped kinds
 * it may not list): objects there count as unknown, and the dry-run names any it may not write.
 */
async function listVisible(kube: KubeClient, list: LabelledList): Promise<KubernetesObject[]> {
  try {
    return await kube.list(list.apiVersion, list.kind, list.selector);
  } catch (error) {
    if (statusCodeOf(error) !== 403) throw error;
  }
  return listInNamespaces(kube, list);
}

/** One kind's objects with a label selector, in the namespaces where they are looked for. */
interface LabelledList {
  readonly apiVersion: string;
  readonly kind: string;
  readonly selector: string;
  readonly namespaces: ReadonlySet<string>;
}

/** Namespace by namespace, skipping those it may not list (objects there count as unknown). */
async function listInNamespaces(
  kube: KubeClient,
  { apiVersion, kind, selector, namespaces }: LabelledList,
): Promise<KubernetesObject[]> {
  const found: KubernetesObject[] = [];
  for (const namespace of namespaces) {
    try {
      found.push(...(await kube.list(apiVersion, kind, selector, namespace)));
    } catch (error) {
      if (statusCodeOf(error) !== 403) throw error;
    }
  }
  return found;
}

/**
 * An object needs no write when this exact object was applied last time (same hash) and every
 * field it sets still has that value in the cluster (no drift).
 */
export function isUnchanged(
  desired: DesiredObject,
  live: KubernetesObject | undefined,
  appliedHash: string | undefined,
): boolean {
  return live !== undefined && appliedHash === desired.hash && isSubset(storedForm(desired.object), live);
}

function isImmutableError(error: unknown): boolean {
  return statusCodeOf(error) === 422 && /immutable/i.test(apiErrorMessage(error));
}

const mayRecreate = (object: KubernetesObject) => annotatedAs(object, FORCE_ANNOTATION, 'enabled');
/** A CRD or Namespace: deleting one deletes everything in it, so force never recreates one. */
const isContainer = ({ apiVersion, kind }: KubernetesObject) =>
  (kind === 'Namespace' && apiVersion === 'v1') ||
  (kind === 'CustomResourceDefinition' && apiVersion?.startsWith('apiextensions.k8s.io/') === true);
const IMMUTABLE_HINT = `(annotate the object with ${FORCE_ANNOTATION}: enabled to let sluice recreate it)`;

/**
 * Server-side dry-run of each object; every failure is reported, naming the file and object.
 * An immutable-field change passes when the object may be recreated (`sluice.io/force: enabled`)
 * and is one this delivery owns (in `owned`, listed by its owner label): those are returned, as
 * objects the run will delete and create again.
 */
export async function dryRun(
  kube: KubeClient,
  objects: readonly DesiredObject[],
  owned: ReadonlyMap<string, KubernetesObject>,
): Promise<DesiredObject[]> {
  const problems: string[] = [];
  const recreated: DesiredObject[] = [];
  await forEachBounded(objects, APPLY_CONCURRENCY, async (desired) => {
    const { object, origin } = desired;
    try {
      await kube.apply(object, { dryRun: true });
    } catch (error) {
      const immutable = isImmutableError(error);
      if (immutable && mayRecreate(object) && owned.has(desired.entry.id) && !isContainer(object))
        return void recreated.push(desired);
      const hint = !immutable
        ? ''
        : mayRecreate(object) && isContainer(object)
          ? ` (${FORCE_ANNOTATION} never recreates a ${object.kind}: deleting it would delete everything in it; change it by hand)`
          : mayRecreate(object)
            ? ` (${FORCE_ANNOTATION} recreates only objects labelled ${OWNER_LABEL}=${object.metadata?.labels?.[OWNER_LABEL]}; this one is not, and is left alone)`
            : ` ${IMMUTABLE_HINT}`;
      problems.push(
        `${origin}: ${describeObject(object)}: ${apiErrorMessage(error, desired.sensitive)}${hint}`,
      );
    }
  });
  if (problems.length > 0) failValidation(problems.sort());
  return recreated;
}

/** How applyStaged applies (as fluxcd/pkg ssa's ApplyOptions); the wait is for CRDs to be Established. */
export interface ApplyOptions extends WaitOptions {
  /** The objects that could not be looked up before the definitions stage is applied. */
  readonly deferred: readonly DesiredObject[];
  /** The live objects the delivery owns, by inventory id: an object among them is configured, not created. */
  readonly live: ReadonlyMap<string, KubernetesObject>;
  /** Checks the deferred objects once the definitions stage is applied (their ownership). */
  readonly checkDeferred?: (later: readonly DesiredObject[]) => Promise<void>;
}

/**
 * Applies the changed objects stage by stage (definitions, classes, the rest), waiting for CRDs
 * to be Established before the stages that use them; once the definitions stage is applied,
 * `checkDeferred` is given the objects that could not be looked up before it (their ownership is
 * checked there), then they are dry-run.
 */
export async function applyStaged(
  kube: KubeClient,
  changed: readonly DesiredObject[],
  { deferred, live, clock, timeoutMs, checkDeferred = async () => {} }: ApplyOptions,
): Promise<Pick<ChangeSet, 'created' | 'configured'>> {
  const created: string[] = [];
  const configured: string[] = [];
  for (const stage of STAGES) {
    const batch = changed.filter((d) => stageOf(d.object) === stage);
    const failures: string[] = [];
    await forEachBounded(batch, APPLY_CONCURRENCY, async (desired) => {
      try {
        await applyOne(kube, desired, { clock, timeoutMs: RECREATE_TIMEOUT_MS });
        (live.has(desired.entry.id) ? configured : created).push(desired.entry.id);
      } catch (error) {
        failures.push(
          `${desired.origin}: ${describeObject(desired.object)}: ${error instanceof SluiceError ? error.message : apiErrorMessage(error, desired.sensitive)}`,
        );
      }
    });
    if (failures.length > 0) throw new SluiceError('ApplyFailed', failures.sort().join('; '));
    if (stage === 'definitions') {
      await waitForCrdsEstablished(
        kube,
        batch.map((d) => d.object).filter((o) => o.kind === 'CustomResourceDefinition'),
        { clock, timeoutMs },
      );
      const later = deferred.filter((d) => stageOf(d.object) !== 'definitions' && changed.includes(d));
      await checkDeferred(later);
      // Their kind (in this version) or namespace is new: none is ours yet, so none may be recreated.
      await dryRun(kube, later, new Map());
    }
  }
  return { created, configured };
}

/** How long a recreated object may take to go before it is applied again. */
const RECREATE_TIMEOUT_MS = 60_000;

/** Applies one object; `wait` is how long one it recreates may take to go. */
async function applyOne(kube: KubeClient, desired: DesiredObject, wait: WaitOptions): Promise<void> {
  try {
    await kube.apply(desired.object);
  } catch (error) {
    if (!isImmutableError(error)) throw error;
    if (!mayRecreate(desired.object))
      throw new SluiceError('ApplyFailed', `${apiErrorMessage(error, desired.sensitive)} ${IMMUTABLE_HINT}`);
    // Read again: only the object this delivery owns is deleted, and only that very object (uid).
    const live = await kube.get(desired.object);
    const owner = desired.object.metadata?.labels?.[OWNER_LABEL];
    if (live && live.metadata?.labels?.[OWNER_LABEL] !== owner)
      throw new SluiceError(
        'ApplyFailed',
        `${apiErrorMessage(error, desired.sensitive)} (not recreated: it is not labelled ${OWNER_LABEL}=${owner}, so it is not ours to delete)`,
      );
    if (live) await kube.delete(live, { uid: live.metadata?.uid });
    await waitUntilGone(kube, desired.object, wait);
    await kube.apply(desired.object);
  }
}

async function waitUntilGone(
  kube: KubeClient,
  object: KubernetesObject,
  { clock, timeoutMs }: WaitOptions,
): Promise<void> {
  const gone = await poll({
    clock,
    every: 200,
    timeout: timeoutMs,
    until: async () => !(await kube.get(object)),
  });
  if (!gone)
    throw new SluiceError(
      'ApplyFailed',
      `${describeObject(object)} was not deleted within ${timeoutMs / 1000}s for recreation`,
    );
}
