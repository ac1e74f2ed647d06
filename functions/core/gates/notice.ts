// What a notice of a held release says: why it waits, until when, and the one action that can lift
// the hold. An approval lifts only a gate held by its requests; a freeze or calendar event is waited
// out, an alarm is fixed, a gate that cannot be evaluated is fixed, and only a break-glass override
// lets a revision through any of them sooner. Pure: reconcile/release-waiting.ts publishes it.
import type { BlockingGate } from '../model/status.ts';
import { revisionText } from '../model/revision-text.ts';
import { alarmHoldsText } from '../alarms/alarms.ts';
import { printable } from '../access/audit-text.ts';
import { formatInstant } from './messages.ts';

/** What holds the release at the gate. */
export type HoldCause = 'approval' | 'freeze' | 'calendar' | 'change-calendar' | 'alarm' | 'problem';

/**
 * What lifts the hold: `approve` (a request opens the gate), `wait` (a freeze, calendar event or
 * Change Calendar ends), `fix-alarm` (the alarm returns to OK), `fix-gate` (its stored request or
 * registration is fixed). Only `approve` is sent as something to approve.
 */
export type LiftAction = 'approve' | 'wait' | 'fix-alarm' | 'fix-gate';

/** Stands for the gate function's name in the CLI line when the run does not know it. */
export const GATE_FUNCTION_PLACEHOLDER = '<gate function>';

/** Where the release waits, besides its delivery's own gates: a wave gate of a rollout. */
export interface WaveOf {
  readonly rollout: string;
  /** 1-based. */
  readonly wave: number;
  /** The wave's members the gate holds. */
  readonly deliveries: readonly string[];
}

export interface HoldNoticeInput {
  readonly delivery: string;
  readonly gate: BlockingGate;
  /** The held revision, when the registry could be reached. */
  readonly revision?: string;
  /** The gate's Systems Manager runbook, if it has approvers. */
  readonly runbook?: string;
  /** The gate function's name, when the run knows it. */
  readonly gateFunction?: string;
  readonly wave?: WaveOf;
}

export interface HoldNotice {
  readonly cause: HoldCause;
  readonly lift: LiftAction;
  /** `gate 'holiday' is closed by freeze "year end" (…)`. */
  readonly why: string;
  /** When the hold ends by itself, if known (a freeze's or calendar event's end, a window, a schedule). */
  readonly until?: string;
  /** The sentence saying what lifts it. */
  readonly todo: string;
  /** Only for `approve`: how to approve it. */
  readonly approve?: { readonly runbook?: string; readonly cli: string };
  /**
   * The notice's identity: a delivery (or a rollout's wave) is told once per key. An approval is
   * per revision; a freeze or calendar event per window (its end), whatever revision is held; an
   * alarm per set of alarms; a broken gate per problem.
   */
  readonly key: string;
  /** The whole notice, one paragraph. */
  readonly text: string;
}

/** `sluice gate open <gate> --revision <revision> [--delivery <d>] --function <gate function>` */
export function approvalCommand(
  gate: string,
  revision: string | undefined,
  gateFunction?: string,
  delivery?: string,
): string {
  return [
    `sluice gate open ${gate}`,
    ...(revision ? [`--revision ${revision}`] : []),
    ...(delivery ? [`--delivery ${delivery}`] : []),
    `--function ${gateFunction ?? GATE_FUNCTION_PLACEHOLDER}`,
  ].join(' ');
}

const WAITED_OUT: Record<'freeze' | 'calendar' | 'change-calendar', string> = {
  freeze: 'the freeze ends',
  calendar: 'the calendar event ends',
  'change-calendar': 'the Change Calendar opens',
};

const BREAK_GLASS = 'only a break-glass override (sluice gate override) lets a revision through sooner';

const digestKey = (revision: string | undefined) =>
  revision === undefined ? 'any' : revision.slice(revision.lastIndexOf('sha256:'));

/** The cause, the action that lifts it, and the words for both. */
export function holdNotice(input: HoldNoticeInput): HoldNotice {
  const { gate, revision } = input;
  const name = `gate '${gate.name}'`;
  const body = ((): Omit<HoldNotice, 'text'> => {
    if (gate.closedByAlarms?.length) {
      const alarms = [...gate.closedByAlarms.map((hold) => hold.alarm)].sort();
      return {
        cause: 'alarm',
        lift: 'fix-alarm',
        why: `${name} is closed by ${alarmHoldsText(gate.closedByAlarms)}`,
        todo: `No approval opens it: fix what ${alarms.length > 1 ? 'the alarms report' : `alarm '${gate.closedByAlarms[0]!.alarm}' reports`}; the gate opens by itself when ${alarms.length > 1 ? 'they are' : 'it is'} OK (${BREAK_GLASS}).`,
        key: `alarm/${gate.name}/${alarms.join(',')}`,
      };
    }
    if (gate.problem)
      return {
        cause: 'problem',
        lift: 'fix-gate',
        why: `${name} is closed: ${printable(gate.problem)}`,
        todo: `No approval opens it: fix the gate (sluice gates ${gate.name} says why).`,
        key: `problem/${gate.name}/${gate.problem}`,
      };
    if (gate.closedBy) {
      const cause = gate.closedByCause ?? 'freeze';
      const ends = gate.opensAt
        ? `when ${WAITED_OUT[cause]} at ${formatInstant(gate.opensAt)}`
        : `when ${WAITED_OUT[cause]} (no end known)`;
      return {
        cause,
        lift: 'wait',
        why: `${name} is closed by ${printable(gate.closedBy)}`,
        ...(gate.opensAt && { until: gate.opensAt }),
        todo: `No approval opens it: it goes out by itself ${ends}; ${BREAK_GLASS}.`,
        key: `wait/${gate.name}/${gate.closedBy}/${gate.opensAt ?? 'unknown'}`,
      };
    }
    const forDelivery = gate.openFor?.deliveries ? input.delivery : undefined;
    const cli = approvalCommand(gate.name, revision, input.gateFunction, forDelivery);
    const why = gate.openFor?.deliveries
      ? `${name} is open only for deliveries ${gate.openFor.deliveries.join(', ')} (approved by ${gate.openFor.approvedBy})`
      : gate.openFor
        ? `${name} is open only for ${revisionText(gate.openFor.revision, 'claimed')} (approved by ${gate.openFor.approvedBy})`
        : `${name} is closed`;
    // The text ends with the CLI line; without the gate function's name (a run in AWS does not
    // know it) it ends before `--function`, which the approval topic's message appends.
    const line = [
      `sluice gate open ${gate.name}`,
      ...(revision ? [`--revision ${revision}`] : []),
      ...(forDelivery ? [`--delivery ${forDelivery}`] : []),
      '--reason <why>',
      ...(input.gateFunction ? [`--function ${input.gateFunction}`] : []),
    ].join(' ');
    const where = input.runbook
      ? `in the console (Systems Manager, Automation, runbook ${input.runbook}) or with: ${line}`
      : `with: ${line}`;
    const opens = gate.opensAt ? `it opens by itself at ${formatInstant(gate.opensAt)}; ` : '';
    return {
      cause: 'approval',
      lift: 'approve',
      why,
      ...(gate.opensAt && { until: gate.opensAt }),
      todo: `${opens ? `${opens[0]!.toUpperCase()}${opens.slice(1)}to let it through sooner, approve` : 'Approve'} ${revision ? 'this revision' : 'it'} ${where}`,
      approve: { ...(input.runbook && { runbook: input.runbook }), cli },
      key: `approve/${gate.name}/${digestKey(revision)}${forDelivery ? `/${forDelivery}` : ''}`,
    };
  })();
  const held = revision ? ` (revision ${revisionText(revision, 'checked')})` : '';
  const who = input.wave
    ? `rollout '${input.wave.rollout}' wave ${input.wave.wave} (${input.wave.deliveries.join(', ')})${held} waits at ${name}`
    : `delivery '${input.delivery}'${held} waits at ${name}`;
  const until = body.until && body.lift === 'wait' ? ` until ${formatInstant(body.until)}` : '';
  return { ...body, text: `sluice: ${who}: ${body.why}${until}. ${body.todo}` };
}
