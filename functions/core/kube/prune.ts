import type { KubernetesObject } from '@kubernetes/client-node';
import { SluiceError } from '../errors.ts';
import {
  apiVersionOf,
  entryFor,
  InventoryEntryError,
  refOf,
  type InventoryEntry,
  type ObjectRef,
} from '../manifests/inventory.ts';
import { describeObject, OWNER_LABEL } from '../manifests/objects.ts';
import { findCascade, isContainer, keptOf, type KeptContainer } from './cascade.ts';
import {
  apiErrorMessage,
  isObjectNotFound,
  statusCodeOf,
  type KubeClient,
  type OwnerScope,
} from './client.ts';
import { forEachBounded } from '../pacer.ts';
import { APPLY_CONCURRENCY } from './pool.ts';
import { reasonToKeep } from './prunable.ts';
import { compareApplyOrder, STAGES, stageOf } from './stages.ts';

export interface PruneResult {
  /** Ids this run deleted, or that the API server answered NotFound for (already gone). */
  readonly deleted: string[];
  /** Ids left in place, with the reason (not this delivery's, or `sluice.io/prune: disabled`). */
  readonly skipped: { id: string; reason: string }[];
  /**
   * Ids of a kind the API server no longer has: served in no version, defined by no CRD, served
   * by no aggregated API. Their objects went with the kind; nothing was deleted for them.
   */
  readonly goneWithKind: string[];
  /**
   * CRDs and Namespaces left in place because they hold objects this prune does not delete
   * (another delivery's, hand-made, `prune: disabled`, or applied by the revision).
   */
  readonly containersKept: KeptContainer[];
}

/** From this many objects of one kind to prune, one list of the kind replaces a read per object. */
const LIST_FROM = 10;

interface Target {
  readonly entry: InventoryEntry;
  readonly ref: ObjectRef;
  /** The object the entry names, in the version its kind is served in (once resolved). */
  object: KubernetesObject;
}

/** How the objects of one inventoried group, kind and version are reached now. */
type KindFate =
  /** Served in this version: the entry's own if it still is, else another of its group. */
  | { readonly apiVersion: string }
  /** Not served in any version, and nothing defines it any more. */
  | { readonly gone: true }
  /** Not served, but it may still exist (or that cannot be told): why. */
  | { readonly error: string };

const fateKey = (ref: ObjectRef) => `${ref.group}/${ref.version}/${ref.kind}`;

/**
 * Resolves inventoried kinds by group and kind, whatever version they were applied in: the
 * entry's version if still served, else the group's preferred version that serves the kind. A
 * kind served in no version is gone only when the API server confirms nothing defines it.
 * Answers are kept per kind; `again` asks once more with fresh discovery, for a kind whose
 * requests the server refused as not served (discovery answered from before a CRD changed).
 */
function kindResolver(kube: KubeClient) {
  const fates = new Map<string, Promise<KindFate>>();
  const askedAgain = new Set<string>();
  let definers: Promise<Definers> | undefined;
  const resolve = async (ref: ObjectRef): Promise<KindFate> => {
    const own = apiVersionOf(ref);
    const [served] = (await kube.resource(own, ref.kind))
      ? [own]
      : await kube.servedVersions(ref.group, ref.kind);
    if (served) return { apiVersion: served };
    try {
      const why = whyKindMayExist(await (definers ??= listDefiners(kube)), ref);
      return why ? { error: why } : { gone: true };
    } catch (error) {
      definers = undefined;
      return {
        error: `no version of ${kindName(ref)} is served, and whether it still exists cannot be told: ${apiErrorMessage(error)}`,
      };
    }
  };
  return {
    fate(ref: ObjectRef): Promise<KindFate> {
      const key = fateKey(ref);
      let fate = fates.get(key);
      if (!fate) fates.set(key, (fate = resolve(ref)));
      return fate;
    },
    again(ref: ObjectRef): Promise<KindFate> {
      const key = fateKey(ref);
      if (!askedAgain.has(key)) {
        askedAgain.add(key);
        kube.forgetDiscovery();
        definers = undefined;
        fates.set(key, resolve(ref));
      }
      return fates.get(key)!;
    },
  };
}

const kindName = (ref: ObjectRef) => `${ref.kind}${ref.group ? ` (group ${ref.group})` : ''}`;

/** A 404 that is not about the object: its resource is not served at that path (any more). */
function notServed(error: unknown, object: KubernetesObject): boolean {
  return statusCodeOf(error) === 404 && !isObjectNotFound(error, object.metadata?.name);
}

/** What can define a kind the API server does not serve now. */
interface Definers {
  readonly crds: readonly KubernetesObject[];
  readonly apiServices: readonly KubernetesObject[];
}

async function listDefiners(kube: KubeClient): Promise<Definers> {
  const [crds, apiServices] = await Promise.all([
    kube.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition', ''),
    kube.list('apiregistration.k8s.io/v1', 'APIService', ''),
  ]);
  return { crds, apiServices };
}

/**
 * Why objects of a kind served in no version may still exist: a CRD still defines it (serving no
 * version), or an aggregated API (an APIService backed by a service, which can be unavailable)
 * serves its group. The API server's own groups need no such check: it serves them itself, so
 * what its discovery leaves out does not exist.
 */
function whyKindMayExist(definers: Definers, ref: ObjectRef): string | undefined {
  const kind = kindName(ref);
  const crd = definers.crds.find((object) => {
    const spec = (object as { spec?: { group?: string; names?: { kind?: string } } }).spec;
    return spec?.group === ref.group && spec?.names?.kind === ref.kind;
  });
  if (crd) {
    return (
      `no version of ${kind} is served, but ${describeObject(crd)} still defines it, so its objects may ` +
      `still exist: serve a version of it, or delete the CRD, for the prune to go on`
    );
  }
  const api = definers.apiServices.find((object) => {
    const spec = (object as { spec?: { group?: string; service?: unknown } }).spec;
    return spec?.group === ref.group && spec?.service;
  });
  if (api) {
    const conditions = (api as { status?: { conditions?: { type?: string; message?: string }[] } }).status
      ?.conditions;
    const available = conditions?.find((c) => c.type === 'Available')?.message;
    return (
      `no version of ${kind} is served, but ${describeObject(api)} serves group ${ref.group}` +
      `${available ? ` (${available})` : ''}, so its objects may still exist`
    );
  }
  return undefined;
}

/** The kinds with many objects to prune, listed once (owner label selector) instead of read object by object. */
async function listOwnedKinds(
  { kube, owner }: OwnerScope,
  targets: readonly Target[],
): Promise<Map<string, KubernetesObject>> {
  const byKind = new Map<string, Target[]>();
  for (const target of targets) {
    const key = `${target.object.apiVersion}/${target.object.kind}`;
    const ofKind = byKind.get(key);
    if (ofKind) ofKind.push(target);
    else byKind.set(key, [target]);
  }
  const owned = new Map<string, KubernetesObject>();
  const many = [...byKind.values()].filter((ofKind) => ofKind.length >= LIST_FROM);
  await forEachBounded(many, APPLY_CONCURRENCY, async (ofKind) => {
    const { apiVersion, kind } = ofKind[0]!.object;
    try {
      for (const object of await kube.list(apiVersion!, kind!, `${OWNER_LABEL}=${owner}`))
        owned.set(entryFor(object).id, object);
    } catch {
      // read object by object instead, as for a few objects
    }
  });
  return owned;
}

export interface PruneOptions extends OwnerScope {
  /** The inventory entries to prune. */
  readonly entries: readonly InventoryEntry[];
  /** What the revision applies, named as such when it holds a container (`(in this revision)`). */
  readonly desired?: readonly InventoryEntry[];
}

/**
 * Deletes the inventoried objects in `entries`, in reverse apply order (workloads, then classes,
 * then definitions), never one whose owner label does not name this delivery or that is
 * annotated `sluice.io/prune: disabled`. Each delete is conditional on the object being the one
 * that was checked (same uid); one replaced since is checked again. Objects are reached in
 * whichever version their kind is served now (see kindResolver). A CRD or Namespace is deleted
 * only while all it holds goes too (see findCascade): checked before anything is deleted, and
 * again just before it is; one that holds anything else is kept (`kept`), and the rest of the
 * prune goes on. Nothing is deleted when an entry cannot be parsed. Throws PruneFailed
 * naming every object that could not be deleted, or whose fate cannot be told.
 */
export async function pruneEntries({
  kube,
  owner,
  entries,
  desired = [],
}: PruneOptions): Promise<PruneResult> {
  const targets: Target[] = [];
  const unparsable: string[] = [];
  for (const entry of entries) {
    try {
      const ref = refOf(entry);
      const metadata = { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) };
      targets.push({ entry, ref, object: { apiVersion: apiVersionOf(ref), kind: ref.kind, metadata } });
    } catch (error) {
      if (!(error instanceof InventoryEntryError)) throw error;
      unparsable.push(error.message);
    }
  }
  if (unparsable.length > 0)
    throw new SluiceError('PruneFailed', `nothing was pruned: ${unparsable.join('; ')}`);
  if (targets.length === 0) return { deleted: [], skipped: [], goneWithKind: [], containersKept: [] };

  // The run may have just changed CRDs (a version no longer served): learn what is served now.
  kube.forgetDiscovery();
  const kinds = kindResolver(kube);
  const served: Target[] = [];
  await forEachBounded(targets, APPLY_CONCURRENCY, async (target) => {
    const fate = await kinds.fate(target.ref);
    if (!('apiVersion' in fate)) return;
    target.object = { ...target.object, apiVersion: fate.apiVersion };
    served.push(target);
  });
  const kept = new Map<string, KeptContainer>();
  if (targets.some((t) => isContainer(t.ref))) {
    try {
      const { blockers } = await findCascade({ kube, owner, stale: entries, desired });
      for (const container of keptOf(entries, blockers)) kept.set(container.id, container);
    } catch (error) {
      throw new SluiceError('PruneFailed', `nothing was pruned: ${apiErrorMessage(error)}`, { cause: error });
    }
  }
  targets.sort((a, b) => compareApplyOrder(b.object, a.object));
  const owned = await listOwnedKinds({ kube, owner }, served);

  const result: PruneResult = {
    deleted: [],
    skipped: [],
    goneWithKind: [],
    containersKept: [...kept.values()],
  };
  const failures: string[] = [];
  for (const stage of [...STAGES].reverse()) {
    const batch = targets.filter((t) => stageOf(t.object) === stage && !kept.has(t.entry.id));
    await forEachBounded(batch, APPLY_CONCURRENCY, async (target) => {
      try {
        const failure = await pruneOne(kube, target, {
          entries,
          desired,
          owner,
          kinds,
          owned,
          result,
        });
        if (failure) failures.push(`${describeObject(target.object)}: ${failure}`);
      } catch (error) {
        failures.push(`${describeObject(target.object)}: ${apiErrorMessage(error)}`);
      }
    });
  }
  if (failures.length > 0)
    throw new SluiceError('PruneFailed', `could not delete ${failures.sort().join('; ')}`);
  return result;
}

interface PruneRun {
  readonly entries: readonly InventoryEntry[];
  readonly desired: readonly InventoryEntry[];
  readonly owner: string;
  readonly kinds: ReturnType<typeof kindResolver>;
  readonly owned: ReadonlyMap<string, KubernetesObject>;
  readonly result: PruneResult;
}

/** Prunes one object, recording it in `run.result`; returns why it could not be, if so. */
async function pruneOne(kube: KubeClient, target: Target, run: PruneRun): Promise<string | undefined> {
  const { entry, ref } = target;
  let fate = await run.kinds.fate(ref);
  let object = target.object;
  let live: KubernetesObject | undefined;
  for (let asked = 0; ; asked++) {
    if ('gone' in fate) {
      run.result.goneWithKind.push(entry.id);
      return undefined;
    }
    if ('error' in fate) return fate.error;
    object = { ...object, apiVersion: fate.apiVersion };
    try {
      // Listed kinds hold every object still labelled ours; any other is gone or not ours: read it.
      live = run.owned.get(entry.id) ?? (await kube.get(object));
      break;
    } catch (error) {
      if (!notServed(error, object) || asked > 0) throw error;
      fate = await run.kinds.again(ref);
    }
  }
  for (let attempt = 0; ; attempt++) {
    if (!live) {
      run.result.deleted.push(entry.id);
      return undefined;
    }
    const reason = reasonToKeep(live, run.owner);
    if (reason) {
      run.result.skipped.push({ id: entry.id, reason });
      return undefined;
    }
    if (isContainer(ref)) {
      // Again just before deleting it: what it holds may have changed since the first check.
      const { blockers } = await findCascade({
        kube,
        owner: run.owner,
        stale: run.entries,
        only: entry,
        desired: run.desired,
      });
      if (blockers.length > 0) {
        run.result.containersKept.push(...keptOf([entry], blockers));
        return undefined;
      }
    }
    try {
      await kube.delete(live, { uid: live.metadata?.uid });
      run.result.deleted.push(entry.id);
      return undefined;
    } catch (error) {
      // 409: it was replaced since it was read; read the new one and decide again, once.
      if (statusCodeOf(error) !== 409 || attempt > 0) throw error;
      live = await kube.get(object);
    }
  }
}
