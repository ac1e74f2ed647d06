// A person's halt, resume or rollback of a rollout: through the gate function's rollouts entry
// (which IAM lets only grantRolloutControl's grantees invoke), by the principal STS verified for
// the request's proof; or locally by the CLI, recorded as a claim. Each is kept as the rollout's
// audit trail, and the answer is the rollout's state after it.
import type { Rollout } from '../config/index.ts';
import { claimedCaller, readablePrincipal, type Caller } from '../access/caller.ts';
import { GateEventError } from '../gates/event.ts';
import { ProofRefused } from '../access/proof.ts';
import { provenPrincipal, type Transport } from '../gates/proven-request.ts';
import type { GateDeps } from '../gates/requests.ts';
import type { UrlCaller } from '../access/signers.ts';
import {
  parseRolloutAction,
  ROLLOUTS_ALIAS,
  isRolloutsEntry,
  rolloutActionDigest,
  type RolloutActionEvent,
  type RolloutActionFields,
} from '../gates/rollout-action-event.ts';
import type { RolloutAction } from '../model/rollout.ts';
import { rolloutSummary, type RolloutState } from '../rollout/state.ts';
import {
  getGeneration,
  getRollout,
  listRolloutNames,
  appendRolloutAction,
  recordRolloutAction,
  rememberRejected,
  startGeneration,
} from '../store/rollouts.ts';
import type { EventSink } from './events.ts';
import { announceRollout } from './rollout-events.ts';
import { readRolloutState } from './rollout-target.ts';

/** What a rollout action reaches: the table, the clock, the gate readers, reconciling members at once, the bus. */
export type RolloutActionDeps = Pick<
  GateDeps,
  'db' | 'clock' | 'alarmStates' | 'changeCalendarStates' | 'reconcileNow' | 'log' | 'sts' | 'signers'
> & {
  /** Publishes the rollout's events after the action (a halt at once, not by the next member run). @default - none */
  readonly rolloutEvents?: Pick<EventSink, 'rollout'>;
};

/** A rollout's state as JSON carries it. */
export type RolloutStateView = Omit<RolloutState, 'mayTake'> & { readonly mayTake: readonly string[] };

/** What a rollout action answers. */
export interface RolloutActionResult {
  readonly rollout: string;
  readonly action: RolloutActionEvent['action'];
  readonly outcome: 'accepted';
  /** The record written (a rollback's names the generation it rolled back). */
  readonly record: RolloutAction;
  /** The members asked to reconcile now (after a resume or rollback). */
  readonly reconciling: readonly string[];
  /** The rollout's state after the action. */
  readonly state: RolloutStateView;
  readonly message: string;
}

/** A rollout action that cannot be done as asked; nothing was written. */
export class RolloutActionRefused extends GateEventError {
  constructor(
    readonly rollout: string,
    message: string,
  ) {
    super(`rollout '${rollout}': ${message}`);
  }
}

export const viewOf = (state: RolloutState): RolloutStateView => ({
  ...state,
  mayTake: [...state.mayTake].sort(),
});

/** Where a rollout action goes (said when one arrives through another entry). */
export const ROLLOUTS_ENTRY_HINT = `send rollout actions to the gate function's ${ROLLOUTS_ALIAS} entry (grantRolloutControl allows it): sluice rollout halt|resume|rollback --function <gate function>`;

/**
 * A rollout action carrying a proof of its sender (`{"rollout","action","reason","proof"}`), by
 * either transport. It must come through the rollouts entry; its author is the principal STS names
 * for the proof. A bad event throws GateEventError, a refused proof ProofRefused; nothing is written.
 */
export async function handleProvenRolloutAction(
  raw: Record<string, unknown>,
  transport: Transport,
  invokedFunctionArn: string | undefined,
  deps: RolloutActionDeps,
  urlCaller?: UrlCaller,
): Promise<RolloutActionResult> {
  const { proof, ...fields } = raw;
  if (!invokedFunctionArn || !isRolloutsEntry(invokedFunctionArn))
    throw new ProofRefused(ROLLOUTS_ENTRY_HINT);
  const event = parseRolloutAction(fields);
  if (proof === undefined)
    throw new ProofRefused(
      'a rollout action through the rollouts entry takes a proof of its sender (sluice rollout … --function makes it); a claim is refused',
    );
  const principal = await provenPrincipal(
    proof,
    rolloutActionDigest(fields as unknown as RolloutActionFields),
    invokedFunctionArn,
    deps,
    { what: `rollout '${event.rollout}': ${event.action}`, transport, urlCaller },
  );
  return applyRolloutAction(event, { principal, verified: true }, transport, deps);
}

/** Locally (the CLI without --function): the action is a claim by `requestedBy`, recorded unverified. */
export const applyLocalRolloutAction = (
  event: RolloutActionEvent,
  requestedBy: string,
  deps: RolloutActionDeps,
): Promise<RolloutActionResult> => applyRolloutAction(event, claimedCaller(requestedBy, 'cli'), 'cli', deps);

/**
 * Halts, resumes or rolls back the rollout's current generation for `caller`:
 * - halt: no member takes the revision any more (those that took it keep it); refused when complete;
 * - resume: after a halt, the failed members try again and the rollout goes on (refused when not halted);
 * - rollback: starts a generation of the previous revision (the last the fleet completed) for every
 *   member at once, conditionally on the current one, and the rolled-back digest is never rolled out again.
 */
export async function applyRolloutAction(
  event: RolloutActionEvent,
  caller: Caller,
  source: NonNullable<RolloutAction['source']>,
  deps: RolloutActionDeps,
): Promise<RolloutActionResult> {
  const rollout = await registeredRollout(event.rollout, deps);
  const now = deps.clock.now();
  const generation = await getGeneration(deps.db, rollout.name);
  if (!generation)
    throw new RolloutActionRefused(
      rollout.name,
      `no revision has been rolled out yet: there is nothing to ${event.action}`,
    );
  const before = await readRolloutState(rollout, deps, now, generation);
  const record: RolloutAction = {
    action: event.action,
    generation: generation.generation,
    at: now.toISOString(),
    by: caller.principal,
    verified: caller.verified,
    reason: event.reason,
    source,
    ...(before.activeWave !== undefined && { wave: before.activeWave }),
  };
  // A halt or resume is recorded only after what it was decided on: another action in between refuses it.
  const recordAfterRead = async () => {
    if (!(await recordRolloutAction(deps.db, rollout.name, record, before.actionsSeen)))
      throw new RolloutActionRefused(
        rollout.name,
        `another halt, resume or rollback was recorded while the ${event.action} was asked for: look again (sluice rollout status ${rollout.name}); nothing was done`,
      );
  };
  let members: readonly string[] = [];
  if (event.action === 'halt') {
    if (before.phase === 'Complete' || generation.completedAt)
      throw new RolloutActionRefused(
        rollout.name,
        `${generation.revision} is complete: there is nothing to halt`,
      );
    await recordAfterRead();
  } else if (event.action === 'resume') {
    if (!before.halt)
      throw new RolloutActionRefused(
        rollout.name,
        `${rolloutSummary(before)}: it is not halted, there is nothing to resume`,
      );
    await recordAfterRead();
    const after = await readRolloutState(rollout, deps, now, generation);
    // The members that may take the revision now and have not got it yet (the failed ones among them).
    const ready = new Set(
      after.waves.flatMap((wave) =>
        wave.members.filter((m) => m.phase === 'Done' || m.phase === 'Soaking').map((m) => m.name),
      ),
    );
    members = [...after.mayTake].filter((name) => !ready.has(name));
  } else {
    if (generation.kind === 'rollback' || !generation.previous)
      throw new RolloutActionRefused(
        rollout.name,
        generation.kind === 'rollback'
          ? `${generation.revision} is a rollback already: push a newer revision to go forward`
          : `${generation.revision} has no previous revision to return to (no earlier generation completed)`,
      );
    const started = await startGeneration(
      deps.db,
      rollout.name,
      {
        ...generation.previous,
        generation: generation.generation + 1,
        kind: 'rollback',
        startedAt: now.toISOString(),
        startedBy: caller.principal,
        verified: caller.verified,
        reason: event.reason,
        // What the fleet returns to is still the last revision it completed: a rollout after this
        // one can be rolled back to it too, whether or not the rollback completes.
        previous: generation.previous,
        rejected: [...(generation.rejected ?? []), generation.digest],
      },
      generation,
    );
    if (!started)
      throw new RolloutActionRefused(
        rollout.name,
        `another generation started while the rollback was asked for: look again (sluice rollout status ${rollout.name}); nothing was rolled back`,
      );
    await rememberRejected(deps.db, rollout.name, generation.digest);
    await appendRolloutAction(deps.db, rollout.name, record);
    members = rollout.waves.flatMap((wave) => wave.deliveries);
  }
  let caughtUp = '';
  if (members.length > 0)
    await deps.reconcileNow?.(members).catch((error: unknown) => {
      caughtUp = `; its members could not be reconciled at once (${String(error)}): their next scheduled runs go on`;
    });
  const state = await readRolloutState(rollout, deps, deps.clock.now());
  // A halt is announced now, not by the next member run; a rollback's first wave likewise.
  await announceRollout(
    rollout,
    state,
    { db: deps.db, events: deps.rolloutEvents, log: deps.log },
    deps.clock.now(),
  );
  const who = readablePrincipal(caller.principal, caller.verified);
  const message = `rollout '${rollout.name}': ${PAST[event.action]} by ${who} (${event.reason}); now ${rolloutSummary(state)}${caughtUp}`;
  deps.log?.(message);
  return {
    rollout: rollout.name,
    action: event.action,
    outcome: 'accepted',
    record,
    reconciling: [...members].sort(),
    state: viewOf(state),
    message,
  };
}

const PAST = { halt: 'halted', resume: 'resumed', rollback: 'rolled back' } as const;

async function registeredRollout(name: string, deps: RolloutActionDeps): Promise<Rollout> {
  const rollout = await getRollout(deps.db, name);
  if (rollout) return rollout;
  const known = await listRolloutNames(deps.db);
  throw new RolloutActionRefused(
    name,
    `is not registered (${known.length > 0 ? `registered rollouts: ${known.join(', ')}` : 'no rollouts are registered'}); nothing was done`,
  );
}
