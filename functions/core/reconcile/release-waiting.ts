// The moment a release becomes held at a gate: one `Release Waiting` event per gate it newly waits
// on, naming how to approve it.
import { waitingMessage } from '../gates/messages.ts';
import type { BlockingGate, DeliveryStatus } from '../store/status.ts';
import type { ReconcileDeps } from './deps.ts';
import type { ReleaseWaitingEvent } from './events.ts';

/** Stands for the gate function's name in the CLI line when the run does not know it. */
export const GATE_FUNCTION_PLACEHOLDER = '<gate function>';

/**
 * The gates of `blocking` the delivery did not already wait on for the same revision when the
 * previous run ended: a new revision held, a newly closed gate, or a delivery held after a run
 * that was not.
 */
export function newlyWaitingGates(
  previous: DeliveryStatus | undefined,
  blocking: readonly BlockingGate[],
  revision: string | undefined,
): BlockingGate[] {
  const sameRevision = (previous?.pendingRevision ?? undefined) === revision;
  const before = new Set(
    previous && !previous.ready && sameRevision ? (previous.blockedBy ?? []).map((g) => g.name) : [],
  );
  return blocking.filter((gate) => !before.has(gate.name));
}

/** `sluice gate open <gate> --revision <revision> --function <gate function>` */
export function approvalCommand(gate: string, revision: string | undefined, gateFunction?: string): string {
  return [
    `sluice gate open ${gate}`,
    ...(revision ? [`--revision ${revision}`] : []),
    `--function ${gateFunction ?? GATE_FUNCTION_PLACEHOLDER}`,
  ].join(' ');
}

/** The `Release Waiting` event of `delivery` held at `gate`. */
export function releaseWaitingEvent(
  delivery: string,
  gate: BlockingGate,
  revision: string | undefined,
  deps: Pick<ReconcileDeps, 'gateRunbooks' | 'gateFunction'>,
  time: Date,
): ReleaseWaitingEvent {
  const runbook = deps.gateRunbooks?.get(gate.name);
  return {
    delivery,
    ...(revision && { revision }),
    gate: gate.name,
    blocks: gate.blocks,
    ...(gate.opensAt && { opensAt: gate.opensAt }),
    approve: {
      ...(runbook && { runbook }),
      cli: approvalCommand(gate.name, revision, deps.gateFunction),
    },
    message: `delivery '${delivery}': ${waitingMessage([gate], revision)}`,
    time: time.toISOString(),
  };
}

/**
 * Publishes `Release Waiting` for each gate the delivery newly waits on. A failure to publish is
 * logged, not fatal: the status and the `Reconcile Blocked` event already say it is held.
 */
export async function announceWaiting(
  delivery: string,
  previous: DeliveryStatus | undefined,
  blocking: readonly BlockingGate[],
  revision: string | undefined,
  deps: ReconcileDeps,
): Promise<void> {
  for (const gate of newlyWaitingGates(previous, blocking, revision)) {
    const event = releaseWaitingEvent(delivery, gate, revision, deps, deps.clock.now());
    deps.log?.(`release waiting: ${event.message}`);
    await deps.events
      ?.releaseWaiting?.(event)
      .catch((error: unknown) =>
        deps.log?.(
          `could not publish the Release Waiting event of '${delivery}' at gate '${gate.name}': ${String(error)}`,
        ),
      );
  }
}
