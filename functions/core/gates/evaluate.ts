import { gateHolds } from '../config/held-actions.ts';
import type { GateRef } from '../config/index.ts';
import { SluiceError } from '../errors.ts';
import { getGate, getGateRequest } from '../store/gates.ts';
import type { BlockingGate } from '../model/status.ts';
import type { TableClient } from '../store/table-client.ts';
import { readGateConditions, type GateConditionReaders } from './conditions.ts';
import { requestAuthors } from './messages.ts';
import { overridesFor, withoutOverridden } from './override.ts';
import type { GateOverride } from '../store/gate-overrides.ts';
import { digestOf, gateStateAt, nextOpening, type GateStatus } from './state.ts';

/** The gates a delivery references, as they stand: closed ones, and open ones pinned to a revision. */
export interface GateEvaluation {
  readonly closed: readonly BlockingGate[];
  readonly pinned: readonly {
    readonly ref: GateRef;
    readonly status: GateStatus;
    readonly holdsRollback?: boolean;
  }[];
  /** Break-glass overrides in force for this delivery (evaluateGates only: never the brake's gateHolding). */
  readonly overrides?: readonly GateOverride[];
}

/** The gates holding one revision, by what they block. */
export interface GateVerdict {
  /** `blocks: all` gates: nothing may be applied or pruned. */
  readonly blockAll: readonly BlockingGate[];
  /** `blocks: revisions` gates: the last applied revision may be re-applied, no new one. */
  readonly blockRevisions: readonly BlockingGate[];
  /** Gates that hold the revision but let it through because a break-glass override names it. */
  readonly overridden?: readonly { readonly gate: BlockingGate; readonly override: GateOverride }[];
}

/** Step 3 of a reconcile: the state of every gate the delivery references, at `now`. */
export async function evaluateGates(
  delivery: string,
  refs: readonly GateRef[],
  db: TableClient,
  now: Date,
  conditions: GateConditionReaders = {},
): Promise<GateEvaluation> {
  const evaluations: GateEvaluation[] = [];
  for (const ref of refs) {
    const evaluation = await evaluateGate(delivery, ref, db, now, conditions);
    if (!evaluation)
      throw new SluiceError(
        'GateClosed',
        `delivery '${delivery}' references gate '${ref.name}', which is not registered; nothing was applied (register the gate, or remove the reference)`,
      );
    evaluations.push(evaluation);
  }
  return {
    closed: evaluations.flatMap((evaluation) => evaluation.closed),
    pinned: evaluations.flatMap((evaluation) => evaluation.pinned),
    overrides: await overridesFor(delivery, refs, db, now),
  };
}

/**
 * Whether one gate holds `revision` of `delivery` at `now` (the brake's pruneLimitGate): the
 * blocking gate, undefined when it lets the revision through, or 'unregistered'. The same
 * judgement as a reconcile's (evaluateGates, verdictFor).
 */
export async function gateHolding(
  delivery: string,
  ref: GateRef,
  revision: string,
  db: TableClient,
  now: Date,
  conditions: GateConditionReaders = {},
): Promise<BlockingGate | undefined | 'unregistered'> {
  const evaluation = await evaluateGate(delivery, ref, db, now, conditions);
  if (!evaluation) return 'unregistered';
  const verdict = verdictFor(evaluation, revision);
  return [...verdict.blockAll, ...verdict.blockRevisions][0];
}

/** One gate as `delivery` sees it at `now`; undefined when it is not registered. */
async function evaluateGate(
  delivery: string,
  ref: GateRef,
  db: TableClient,
  now: Date,
  conditions: GateConditionReaders,
): Promise<GateEvaluation | undefined> {
  const gate = await getGate(db, ref.name);
  if (!gate) return undefined;
  const approvesRevisions = {
    ...(gate.approval === 'revision' && { approvesRevisions: true as const }),
    ...(gateHolds(gate, 'rollback') && { holdsRollback: true as const }),
  };
  // Like a close, an alarm, a freeze, a calendar event or a CLOSED Change Calendar holds whatever
  // the requests say (a break-glass override still lets its revision through: verdictFor).
  const { periods, alarms } = await readGateConditions(gate, now, conditions);
  if (alarms.length > 0)
    return {
      closed: [{ name: ref.name, blocks: ref.blocks, closedByAlarms: alarms, ...approvesRevisions }],
      pinned: [],
    };
  const request = await getGateRequest(db, ref.name);
  const status = gateStateAt(gate, request, now, periods);
  if (status.state === 'open' && status.deliveries !== undefined && !status.deliveries.includes(delivery)) {
    const openFor = { deliveries: status.deliveries, approvedBy: requestAuthors(status.lastRequest!) };
    return { closed: [{ name: ref.name, blocks: ref.blocks, openFor, ...approvesRevisions }], pinned: [] };
  }
  if (status.state === 'open')
    return {
      closed: [],
      pinned:
        status.revision !== undefined
          ? [{ ref, status, ...(approvesRevisions.holdsRollback && { holdsRollback: true }) }]
          : [],
    };
  const opensAt = status.problem ? undefined : nextOpening(gate, request, now, periods);
  const holding: BlockingGate = {
    name: ref.name,
    blocks: ref.blocks,
    ...(opensAt && { opensAt }),
    ...approvesRevisions,
    ...(status.problem && { problem: status.problem }),
    ...(status.closedBy && { closedBy: status.closedBy.reason, closedByCause: status.closedBy.cause }),
    // Planned only while something will reopen it: a close schedule that nothing follows (no open
    // schedule, no window; e.g. an approval gate's nightly close) holds until a person acts.
    ...(closedBySchedule(status) && opensAt !== undefined && { closedBySchedule: true }),
  };
  return { closed: [holding], pinned: [] };
}

/** Closed by a firing of the gate's own `schedules` (its cron), not by a person's request or its default. */
const closedBySchedule = (status: GateStatus): boolean =>
  status.byRequest && status.lastRequest?.source === 'schedule' && status.lastRequest.action === 'close';

/**
 * The gates holding `revision`: the closed ones, and those open only for another revision.
 * Without a revision (not resolved yet) only the closed ones count.
 */
export function verdictFor(evaluation: GateEvaluation, revision?: string): GateVerdict {
  const elsewhere =
    revision === undefined
      ? []
      : evaluation.pinned.filter(
          ({ status }) => status.revision !== undefined && digestOf(status.revision) !== digestOf(revision),
        );
  const holding: BlockingGate[] = [
    ...evaluation.closed,
    ...elsewhere.map(({ ref, status, holdsRollback }) => ({
      name: ref.name,
      blocks: ref.blocks,
      approvesRevisions: true,
      ...(holdsRollback && { holdsRollback }),
      openFor: {
        revision: status.revision!,
        approvedBy: requestAuthors(status.lastRequest!),
      },
    })),
  ];
  return withoutOverridden(
    {
      blockAll: holding.filter((gate) => gate.blocks === 'all'),
      blockRevisions: holding.filter((gate) => gate.blocks === 'revisions'),
    },
    evaluation.overrides,
    revision,
  );
}
