// Which objects of a delivery being removed another registered delivery still needs.
import { resolve } from 'node:path';
import type { ClusterTarget, Delivery } from '../config/index.ts';
import { SluiceError } from '../errors.ts';
import { apiErrorMessage, KubeClient } from '../kube/client.ts';
import { forEachBounded } from '../pacer.ts';
import { refOf, type InventoryEntry, type ObjectRef } from '../manifests/inventory.ts';
import { listDeliveries } from '../store/deliveries.ts';
import { readDesiredSet } from '../store/desired-set.ts';
import type { ReconcileDeps } from './deps.ts';
import { planRevision } from './plan.ts';
import { clusterClient } from './cluster-client.ts';

/** An object of a removed delivery left in the cluster (still under its owner label) for another delivery. */
export interface KeptObject {
  /** Inventory id, `<namespace>_<name>_<group>_<kind>`. */
  readonly id: string;
  /**
   * The registered delivery whose current artifact contains it; for a Namespace or a
   * CustomResourceDefinition, the one whose objects it holds (deleting it would delete them).
   */
  readonly delivery: string;
}

/** Deliveries planned at once during a removal (each pulls and builds an artifact). */
const PLAN_CONCURRENCY = 4;

const CRD_GROUP = 'apiextensions.k8s.io';

/** The account of an IAM role ARN (`arn:aws:iam::<account>:role/<name>`). */
const accountOf = (roleArn: string) => roleArn.split(':')[4];

/**
 * Whether two targets may be the same cluster: the same EKS name and region (reached through roles
 * of the same account when both name one: a name is unique per account and region), or the same
 * kubeconfig file (and the same context when both name one). A role or context named on one side
 * only counts as the same (a removal then keeps more, never less). An EKS target and a kubeconfig
 * are taken for different clusters.
 */
export function sameCluster(a: ClusterTarget, b: ClusterTarget): boolean {
  if ('eks' in a && 'eks' in b) {
    const [x, y] = [a.eks, b.eks];
    if (x.name !== y.name || x.region !== y.region) return false;
    return !x.roleArn || !y.roleArn || accountOf(x.roleArn) === accountOf(y.roleArn);
  }
  if ('kubeconfig' in a && 'kubeconfig' in b) {
    if (resolve(a.kubeconfig) !== resolve(b.kubeconfig)) return false;
    return a.context === undefined || b.context === undefined || a.context === b.context;
  }
  return false;
}

function reasonOf(error: unknown): string {
  return error instanceof SluiceError ? `${error.reason}: ${error.message}` : apiErrorMessage(error);
}

/**
 * The ids each other delivery on `removed`'s cluster would apply now (its current revision,
 * planned as a reconcile would, whatever gates or dependencies hold it), by delivery name. One that
 * cannot be planned now answers with the set its latest run stored (store/desired-set.ts). Throws,
 * naming each delivery, why and the remedy, when one has neither: what it needs is then unknown.
 */
async function idsNeededByOthers(removed: Delivery, deps: ReconcileDeps): Promise<Map<string, Set<string>>> {
  const others = (await listDeliveries(deps.db))
    .filter((other) => other.name !== removed.name && sameCluster(other.cluster, removed.cluster))
    .sort((a, b) => a.name.localeCompare(b.name));
  const needed = new Map<string, Set<string>>();
  const problems: string[] = [];
  await forEachBounded(others, PLAN_CONCURRENCY, async (other) => {
    let kube: KubeClient | undefined;
    try {
      kube = await clusterClient(other, deps);
      const planned = await planRevision(other, kube, deps);
      needed.set(other.name, new Set(planned.desired.map((d) => d.entry.id)));
    } catch (error) {
      const why = `delivery '${other.name}' (${other.source.url}): ${reasonOf(error)}`;
      const stored = await readDesiredSet(deps.db, other.name);
      if (stored) {
        deps.log?.(`${why}; using what its revision ${stored.revision} desires, stored ${stored.storedAt}`);
        needed.set(other.name, new Set(stored.ids));
      } else {
        problems.push(`${why}, and no run of it has stored what it desires`);
      }
    } finally {
      kube?.close();
    }
  });
  if (problems.length > 0) {
    throw new Error(
      `delivery '${removed.name}' was not removed and none of its objects were deleted: cannot tell which ` +
        `of them other deliveries on its cluster apply: ${problems.sort().join('; ')}. Fix those ` +
        `deliveries' artifacts and reconcile them once (sluice reconcile <name>), or remove them, or set ` +
        `deletionPolicy: Orphan on '${removed.name}', then try again`,
    );
  }
  return new Map([...needed].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The entries of `inventory` (of `removed`, about to be deleted) that must stay because another
 * registered delivery on the same cluster would apply them now, ids compared regardless of API
 * version; plus the Namespaces holding such objects and the CRDs defining their kinds, whose
 * deletion would take them along. `kube` is a client for `removed`'s cluster (to read its CRDs).
 */
export async function objectsOthersNeed(
  removed: Delivery,
  inventory: readonly InventoryEntry[],
  kube: KubeClient,
  deps: ReconcileDeps,
): Promise<KeptObject[]> {
  if (inventory.length === 0) return [];
  const needed = await idsNeededByOthers(removed, deps);
  const keptBy = new Map<string, string>();
  const kept: (ObjectRef & { delivery: string })[] = [];
  for (const entry of inventory) {
    const needer = [...needed].find(([, ids]) => ids.has(entry.id))?.[0];
    if (!needer) continue;
    keptBy.set(entry.id, needer);
    kept.push({ ...refOf(entry), delivery: needer });
  }
  for (const entry of inventory) {
    if (keptBy.has(entry.id)) continue;
    const { name, group, kind } = refOf(entry);
    if (group === '' && kind === 'Namespace') {
      const inside = kept.find((k) => k.namespace === name);
      if (inside) keptBy.set(entry.id, inside.delivery);
    } else if (group === CRD_GROUP && kind === 'CustomResourceDefinition' && kept.some((k) => k.group)) {
      const spec = await crdSpec(kube, name, entry.v);
      const instance = kept.find((k) => k.group === spec?.group && k.kind === spec?.names?.kind);
      if (instance) keptBy.set(entry.id, instance.delivery);
    }
  }
  return inventory
    .filter((entry) => keptBy.has(entry.id))
    .map((e) => ({ id: e.id, delivery: keptBy.get(e.id)! }));
}

/** The group and kind a live CustomResourceDefinition defines; undefined when it is gone. */
async function crdSpec(
  kube: KubeClient,
  name: string,
  version: string,
): Promise<{ group?: string; names?: { kind?: string } } | undefined> {
  try {
    const crd = await kube.get({
      apiVersion: `${CRD_GROUP}/${version || 'v1'}`,
      kind: 'CustomResourceDefinition',
      metadata: { name },
    });
    return (crd as { spec?: { group?: string; names?: { kind?: string } } } | undefined)?.spec;
  } catch (error) {
    throw new Error(`cannot read CustomResourceDefinition ${name}: ${apiErrorMessage(error)}`, {
      cause: error,
    });
  }
}
