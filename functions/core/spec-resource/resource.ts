import { keptMessage, type CascadeBlocker } from '../kube/cascade.ts';
import { poll, type Clock } from '../clock.ts';
import { parseDelivery, parseGate, parseRollout } from '../config/index.ts';
import { deliveriesUsingGate } from '../store/delivery-lookups.ts';
import { getDelivery, putDelivery } from '../store/deliveries.ts';
import { getGate, putGate, removeGate } from '../store/gates.ts';
import { getRollout, putRollout, removeRollout } from '../store/rollouts.ts';
import type { TableClient } from '../store/table-client.ts';
import { getSpecOwner, putSpecOwner, type SpecResourceKind } from '../store/spec-owners.ts';
import { LeaseHeldError } from '../store/lease.ts';

/** The custom resource's properties, as the Sluice construct writes them. */
export interface SpecResourceProperties {
  readonly Kind: SpecResourceKind;
  readonly Name: string;
  /** The delivery, gate or rollout as JSON, in config-file form (durations as strings such as `5m`). */
  readonly Spec: string;
}

/** The fields of a CloudFormation custom resource event (through the CDK Provider) that are used. */
export interface SpecResourceEvent {
  readonly RequestType: 'Create' | 'Update' | 'Delete';
  readonly RequestId: string;
  readonly PhysicalResourceId?: string;
  readonly ResourceProperties: SpecResourceProperties;
}

export interface SpecResourceResponse {
  readonly PhysicalResourceId: string;
  readonly Data?: Record<string, string>;
}

export interface SpecDeps {
  readonly db: TableClient;
  readonly clock: Clock;
  /**
   * Deletes a delivery: prunes its objects (or orphans them, per deletionPolicy), then its records;
   * `kept` names the objects left for other deliveries whose artifacts contain them.
   */
  readonly deleteDelivery: (name: string) => Promise<DeletedDelivery>;
  /** Asks for an immediate reconcile of deliveries (the reconcile function, asynchronously). */
  readonly reconcileNow?: (deliveries: readonly string[]) => Promise<void>;
  readonly log?: (message: string) => void;
  /** How long a delete waits for a running reconcile of the delivery to finish. */
  readonly leaseWaitMs?: number;
}

/** What deleting a delivery reports back. */
export interface DeletedDelivery {
  readonly deleted: readonly string[];
  readonly policy: string;
  readonly kept?: readonly { readonly id: string; readonly delivery: string }[];
  /** CRDs and Namespaces left in place because they hold objects the removal does not delete. */
  readonly containersKept?: readonly CascadeBlocker[];
}

const DEFAULT_LEASE_WAIT_MS = 10 * 60_000;
const LEASE_POLL_MS = 5_000;

/**
 * `sluice/delivery/oddy-test/<request id of the create>`: unique per created resource, so when
 * CloudFormation replaces one resource by another writing the same name (a construct moved in the
 * tree, or to another stack), the delete of the old one can tell it no longer owns the spec.
 */
export function specPhysicalId(kind: SpecResourceKind, name: string, requestId: string): string {
  return `sluice/${kind}/${name}/${requestId}`;
}

function parsePhysicalId(id: string | undefined): { kind: SpecResourceKind; name: string } | undefined {
  const match = /^sluice\/(delivery|gate|rollout)\/([^/]+)\/[^/]+$/.exec(id ?? '');
  return match ? { kind: match[1] as SpecResourceKind, name: match[2]! } : undefined;
}

/**
 * Handles the per-delivery, per-gate and per-rollout custom resource: create and update write the
 * spec to the table (validated again by the shared schema) and reconcile what it affects; delete
 * removes it, for a delivery by deleting its objects from the cluster (unless `deletionPolicy:
 * Orphan`), for a rollout with its generation and audit trail (its members stay, and resolve
 * their own revisions from then on).
 */
export async function handleSpecEvent(
  event: SpecResourceEvent,
  deps: SpecDeps,
): Promise<SpecResourceResponse> {
  if (event.RequestType === 'Delete') return deleteSpec(event, deps);
  const { Kind: kind, Name: name, Spec: text } = event.ResourceProperties;
  if (kind !== 'delivery' && kind !== 'gate' && kind !== 'rollout')
    throw new Error(`unknown Kind "${String(kind)}"`);
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (error) {
    throw new Error(`${kind} ${name}: Spec is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const previous = parsePhysicalId(event.PhysicalResourceId);
  const physicalId =
    event.RequestType === 'Update' && previous?.kind === kind && previous.name === name
      ? event.PhysicalResourceId!
      : specPhysicalId(kind, name, event.RequestId);
  const now = deps.clock.now();

  if (kind === 'delivery') {
    const delivery = parseDelivery(input, `delivery ${name}`);
    if (delivery.name !== name) throw new Error(`Spec names delivery "${delivery.name}", not "${name}"`);
    await putDelivery(deps.db, delivery, now);
    await putSpecOwner(deps.db, kind, name, physicalId, now);
    await reconcile(deps, [name]);
  } else if (kind === 'rollout') {
    const rollout = parseRollout(input, `rollout ${name}`);
    if (rollout.name !== name) throw new Error(`Spec names rollout "${rollout.name}", not "${name}"`);
    await putRollout(deps.db, rollout, now);
    await putSpecOwner(deps.db, kind, name, physicalId, now);
    // Changed waves may let members take the rollout's revision now.
    if (event.RequestType === 'Update')
      await reconcile(
        deps,
        rollout.waves.flatMap((wave) => wave.deliveries),
      );
  } else {
    const gate = parseGate(input, `gate ${name}`);
    if (gate.name !== name) throw new Error(`Spec names gate "${gate.name}", not "${name}"`);
    await putGate(deps.db, gate, now);
    await putSpecOwner(deps.db, kind, name, physicalId, now);
    // A changed default or window may open the gate for the deliveries waiting on it.
    if (event.RequestType === 'Update') await reconcile(deps, await deliveriesUsingGate(deps.db, name));
  }
  return { PhysicalResourceId: physicalId, Data: { Name: name } };
}

async function reconcile(deps: SpecDeps, deliveries: readonly string[]): Promise<void> {
  if (!deps.reconcileNow || deliveries.length === 0) return;
  try {
    await deps.reconcileNow(deliveries);
  } catch (error) {
    // The spec is stored; the delivery's interval schedule reconciles it anyway.
    deps.log?.(`could not start a reconcile of ${deliveries.join(', ')}: ${String(error)}`);
  }
}

async function deleteSpec(event: SpecResourceEvent, deps: SpecDeps): Promise<SpecResourceResponse> {
  const physicalId = event.PhysicalResourceId ?? '';
  const target = parsePhysicalId(physicalId);
  // A create that failed before it returned has no id of ours: nothing was written.
  if (!target) return { PhysicalResourceId: physicalId };
  const { kind, name } = target;
  const owner = await getSpecOwner(deps.db, kind, name);
  if (owner !== undefined && owner !== physicalId) {
    deps.log?.(`${kind} ${name} is now managed by ${owner}; leaving it in place`);
    return { PhysicalResourceId: physicalId };
  }
  if (kind === 'gate') {
    if (await getGate(deps.db, name)) await removeGate(deps.db, name);
    return { PhysicalResourceId: physicalId };
  }
  if (kind === 'rollout') {
    if (await getRollout(deps.db, name)) await removeRollout(deps.db, name);
    return { PhysicalResourceId: physicalId };
  }
  if (!(await getDelivery(deps.db, name))) return { PhysicalResourceId: physicalId };
  const result = await deleteWhenFree(name, deps);
  deps.log?.(
    result.policy === 'Delete'
      ? `deleted delivery ${name} and ${result.deleted.length} of its objects${keptText(result.kept)}${containersText(result.containersKept)}`
      : `deleted delivery ${name}; its objects were orphaned (deletionPolicy: Orphan)`,
  );
  return { PhysicalResourceId: physicalId };
}

/** `; kept 2 objects that other deliveries' artifacts contain, …: <id> (delivery 'new'), …`, or nothing. */
function keptText(kept: DeletedDelivery['kept']): string {
  if (!kept?.length) return '';
  const list = kept.map((k) => `${k.id} (delivery '${k.delivery}')`).join(', ');
  return `; kept ${kept.length} objects that other deliveries' artifacts contain, for them to take over: ${list}`;
}

/** `; Namespace/a is kept: it holds …`, or nothing. */
function containersText(kept: DeletedDelivery['containersKept']): string {
  return kept?.length ? `; ${keptMessage(kept)}` : '';
}

/** deleteDelivery, waiting (up to leaseWaitMs) while a reconcile of the delivery holds its lease. */
async function deleteWhenFree(name: string, deps: SpecDeps): Promise<DeletedDelivery> {
  let deleted: DeletedDelivery | undefined;
  let held: unknown;
  // Gives up once the next look would come after leaseWaitMs.
  const done = await poll({
    clock: deps.clock,
    every: LEASE_POLL_MS,
    timeout: (deps.leaseWaitMs ?? DEFAULT_LEASE_WAIT_MS) - LEASE_POLL_MS,
    until: async () => {
      try {
        deleted = await deps.deleteDelivery(name);
        return true;
      } catch (error) {
        if (!(error instanceof LeaseHeldError)) throw error;
        held = error;
        return false;
      }
    },
    waiting: () => deps.log?.(`delivery ${name} is being reconciled; waiting to delete it`),
  });
  if (!done) throw held;
  return deleted!;
}
