// How a run ends, recorded: its status and event, the holds (gates, dependencies, the
// mass-deletion brake), and what it sets in motion (the retry of a failure, the deliveries waiting on a success).
import type { Delivery } from '../config/index.ts';
import { waitingMessage } from '../gates/messages.ts';
import { recordEvent, type ReconcileOutcome } from '../store/events.ts';
import {
  getStatus,
  updateStatus,
  type BlockingGate,
  type ChangeCounts,
  type DeliveryStatus,
  type StatusUpdate,
} from '../store/status.ts';
import { dependencyMessage, waitingDependents, type UnreadyDependency } from './depends-on.ts';
import type { ReconcileDeps } from './deps.ts';
import type { PruneCascadeHold } from '../kube/cascade.ts';
import type { PruneLimitHold } from './prune-limit.ts';
import { retryTime } from './retry.ts';

export interface ReconcileResult {
  readonly delivery: string;
  /** `Skipped`: another run held the lease, or the delivery is suspended; nothing was touched. */
  readonly outcome: ReconcileOutcome | 'Skipped';
  readonly reason: string;
  readonly message: string;
  readonly revision?: string;
  readonly changes?: ChangeCounts;
  /** A failed run's scheduled retry (`retryInterval`). */
  readonly nextRetryAt?: string;
}

/**
 * Schedules the retry of a failed run (`retryInterval`) or of a held one (at `at`), unless a retry
 * is already pending: a failed interval or push run between retries must not start a second chain
 * of them. A retry that cannot be scheduled is logged, not fatal: the next regular run retries anyway.
 */
export async function scheduleRetry(
  delivery: Delivery,
  deps: ReconcileDeps,
  at: Date | undefined = retryTime(delivery, deps.clock.now()),
): Promise<string | undefined> {
  const now = deps.clock.now();
  if (!at || !deps.retryTimer) return undefined;
  const pending = (await getStatus(deps.db, delivery.name))?.nextRetryAt;
  if (pending && Date.parse(pending) > now.getTime()) return pending;
  try {
    return (await deps.retryTimer.retryAt(delivery.name, at)).toISOString();
  } catch (error) {
    deps.log?.(`could not schedule the retry of '${delivery.name}': ${String(error)}`);
    return undefined;
  }
}

/** Status fields of a blocked delivery; `blockedSince` keeps the time it was first blocked. */
export function blockedStatus(
  blocking: readonly BlockingGate[],
  now: Date,
  previous: DeliveryStatus | undefined,
): Pick<DeliveryStatus, 'ready' | 'reason' | 'blockedBy' | 'blockedSince'> {
  return {
    ready: false,
    reason: 'GateClosed',
    blockedBy: [...blocking],
    blockedSince: previous?.blockedSince ?? now.toISOString(),
  };
}

/** Records a run held by closed gates: nothing was applied or pruned. */
export async function block(
  deps: ReconcileDeps,
  name: string,
  started: Date,
  blocking: readonly BlockingGate[],
  pending?: string,
): Promise<ReconcileResult> {
  const message = waitingMessage(blocking, pending);
  await finish(deps, name, started, 'Blocked', {
    ...blockedStatus(blocking, started, await getStatus(deps.db, name)),
    message,
    ...(pending && { pendingRevision: pending }),
  });
  return {
    delivery: name,
    outcome: 'Blocked',
    reason: 'GateClosed',
    message,
    ...(pending && { revision: pending }),
  };
}

/** Records a run held until the deliveries it depends on are ready: nothing was applied or pruned. */
export async function waitForDependencies(
  deps: ReconcileDeps,
  name: string,
  started: Date,
  unready: readonly UnreadyDependency[],
): Promise<ReconcileResult> {
  const message = dependencyMessage(unready);
  await finish(deps, name, started, 'Blocked', {
    ready: false,
    reason: 'DependencyNotReady',
    message,
    blockedBy: null,
    blockedSince: (await getStatus(deps.db, name))?.blockedSince ?? started.toISOString(),
  });
  return { delivery: name, outcome: 'Blocked', reason: 'DependencyNotReady', message };
}

/** Now that `name` is ready, the deliveries that were waiting on it reconcile at once (Lambda: asynchronously). */
export async function reconcileWaitingDependents(name: string, deps: ReconcileDeps): Promise<void> {
  if (!deps.reconcileNow) return;
  try {
    const waiting = await waitingDependents(name, deps.db);
    if (waiting.length > 0) await deps.reconcileNow(waiting);
  } catch (error) {
    // Their own interval runs reconcile them anyway.
    deps.log?.(`could not reconcile the deliveries waiting on '${name}': ${String(error)}`);
  }
}

/**
 * Records a run held before it changed anything because of what it would delete: by the
 * mass-deletion brake (PruneLimitExceeded, possibly behind a closed gate) or by a CRD or Namespace
 * whose deletion would cascade (PruneWouldCascade). Nothing was applied or pruned.
 */
export async function holdMassPrune(
  deps: ReconcileDeps,
  name: string,
  started: Date,
  hold: PruneLimitHold | PruneCascadeHold,
  revision: string | undefined,
): Promise<ReconcileResult> {
  const gate = 'gate' in hold ? hold.gate : undefined;
  const previous = await getStatus(deps.db, name);
  await finish(deps, name, started, 'Blocked', {
    ready: false,
    reason: hold.reason,
    message: hold.message,
    lastAttemptedRevision: revision,
    pendingRevision: revision ?? null,
    blockedBy: gate ? [gate] : null,
    blockedSince: previous?.blockedSince ?? started.toISOString(),
  });
  return {
    delivery: name,
    outcome: 'Blocked',
    reason: hold.reason,
    message: hold.message,
    ...(revision && { revision }),
  };
}

/**
 * Records how a run ended: the status, and unless `quiet` (a run that changed nothing and found
 * the delivery as the last one left it: Flux too emits no event then) the event, in the table
 * and on the event bus.
 */
export async function finish(
  deps: ReconcileDeps,
  name: string,
  started: Date,
  outcome: ReconcileOutcome,
  status: StatusUpdate,
  options: { readonly quiet?: boolean } = {},
): Promise<void> {
  const now = deps.clock.now();
  await updateStatus(
    deps.db,
    name,
    {
      // A retry is only pending after a failed run, which sets it.
      nextRetryAt: null,
      ...status,
      lastReconcileAt: now.toISOString(),
      durationMs: now.getTime() - started.getTime(),
    },
    deps.fence,
  );
  if (options.quiet) return;
  const event = {
    delivery: name,
    outcome,
    reason: status.reason,
    message: status.message,
    revision: status.lastAttemptedRevision,
    ...(status.lastAppliedOriginRevision && { originRevision: status.lastAppliedOriginRevision }),
    time: now.toISOString(),
  };
  await recordEvent(deps.db, event, deps.fence);
  await deps.events
    ?.publish(event)
    .catch((error: unknown) => deps.log?.(`could not publish the reconcile event: ${String(error)}`));
}
