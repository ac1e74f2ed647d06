// The moment a release becomes held at a gate: one `Release Waiting` event per cause it newly waits
// on, saying why, until when, and the action that can lift it (gates/notice.ts).
import { holdNotice, type HoldNotice, type WaveOf } from '../gates/notice.ts';
import { claimRolloutEvent } from '../store/rollouts.ts';
import type { BlockingGate, DeliveryStatus } from '../store/status.ts';
import type { ReconcileDeps } from './deps.ts';
import { RELEASE_WAITING_LOG_PREFIX, type ReleaseWaitingEvent } from './events.ts';

/** A rollout member held at its wave's gate, and the wave. */
export interface WaveGateHold {
  readonly gate: BlockingGate;
  readonly wave: Omit<WaveOf, 'deliveries'> & { readonly generation: number };
  /** The wave's members, read only when the notice is published (once for the wave). */
  readonly members: () => Promise<readonly string[]>;
}

type NoticeDeps = Pick<ReconcileDeps, 'gateRunbooks' | 'gateFunction'>;

const noticeOf = (
  delivery: string,
  gate: BlockingGate,
  revision: string | undefined,
  deps: NoticeDeps,
  wave?: WaveOf,
): HoldNotice => {
  const runbook = deps.gateRunbooks?.get(gate.name);
  return holdNotice({
    delivery,
    gate,
    ...(revision && { revision }),
    ...(runbook && { runbook }),
    ...(deps.gateFunction && { gateFunction: deps.gateFunction }),
    ...(wave && { wave }),
  });
};

/**
 * The gates of `blocking` whose notice the delivery was not already held under when the previous
 * run ended: a new revision at an approval gate, a newly closed gate, another freeze window or
 * alarm, or a delivery held after a run that was not. A freeze or calendar event is told once per
 * window, however many revisions it holds (the notice's key names no revision).
 */
export function newlyWaitingGates(
  previous: DeliveryStatus | undefined,
  blocking: readonly BlockingGate[],
  revision: string | undefined,
  deps: NoticeDeps = {},
  delivery = '',
): BlockingGate[] {
  const before = new Set(
    previous && !previous.ready
      ? (previous.blockedBy ?? []).map(
          (gate) => noticeOf(delivery, gate, previous.pendingRevision ?? undefined, deps).key,
        )
      : [],
  );
  return blocking.filter((gate) => !before.has(noticeOf(delivery, gate, revision, deps).key));
}

/** The `Release Waiting` event of `delivery` (or of a rollout's wave) held at `gate`. */
export function releaseWaitingEvent(
  delivery: string,
  gate: BlockingGate,
  revision: string | undefined,
  deps: NoticeDeps,
  time: Date,
  wave?: WaveOf,
): ReleaseWaitingEvent {
  const notice = noticeOf(delivery, gate, revision, deps, wave);
  return {
    delivery,
    ...(revision && { revision }),
    gate: gate.name,
    blocks: gate.blocks,
    ...(wave && { rollout: wave.rollout, wave: wave.wave, deliveries: [...wave.deliveries] }),
    ...(gate.opensAt && { opensAt: gate.opensAt }),
    cause: notice.cause,
    lift: notice.lift,
    why: notice.why,
    ...(notice.until && { until: notice.until }),
    todo: notice.todo,
    ...(notice.approve && { approve: notice.approve }),
    message: notice.text,
    time: time.toISOString(),
  };
}

async function publish(event: ReleaseWaitingEvent, deps: ReconcileDeps): Promise<void> {
  deps.log?.(`${RELEASE_WAITING_LOG_PREFIX}${event.message}`);
  await deps.events
    ?.releaseWaiting?.(event)
    .catch((error: unknown) =>
      deps.log?.(
        `could not publish the Release Waiting event of '${event.delivery}' at gate '${event.gate}': ${String(error)}`,
      ),
    );
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
  for (const gate of newlyWaitingGates(previous, blocking, revision, deps, delivery))
    await publish(releaseWaitingEvent(delivery, gate, revision, deps, deps.clock.now()), deps);
}

/**
 * Publishes `Release Waiting` for a rollout's wave held at its gate: once for the whole wave (the
 * first of its members to find it held claims the notice in the table), per notice key (an
 * approval per revision; a freeze per window; others once per generation), not once per member.
 */
export async function announceWaveWaiting(
  delivery: string,
  hold: WaveGateHold,
  revision: string,
  deps: ReconcileDeps,
): Promise<void> {
  const { gate, wave } = hold;
  // The notice's key names no member: the members are read once it is this run's to publish.
  const notice = noticeOf(delivery, gate, revision, deps, { ...wave, deliveries: [] });
  const perWindow = notice.lift === 'wait' || notice.lift === 'approve';
  const key = `waiting#wave${wave.wave}#${perWindow ? '' : `${wave.generation}#`}${notice.key}`;
  const claimed = await claimRolloutEvent(deps.db, wave.rollout, key).catch((error: unknown) => {
    deps.log?.(`could not record the Release Waiting notice of rollout '${wave.rollout}': ${String(error)}`);
    return false;
  });
  if (!claimed) return;
  const deliveries = await hold.members();
  await publish(
    releaseWaitingEvent(delivery, gate, revision, deps, deps.clock.now(), { ...wave, deliveries }),
    deps,
  );
}
