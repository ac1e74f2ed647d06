import type { ReconcileEvent } from '../store/events.ts';
import type { HoldNotice } from '../gates/notice.ts';
import type { BlockingGate } from '../store/status.ts';

/** The detail type of the event a delivery newly held at a gate publishes. */
export const RELEASE_WAITING = 'Release Waiting';
/** How the reconcile function's log line of a Release Waiting notice starts: the dashboard queries it. */
export const RELEASE_WAITING_LOG_PREFIX = 'release waiting: ';

/**
 * `Release Waiting`: a delivery (or a rollout's wave) has just become held at a gate, why, until
 * when, and the action that can lift it: `approve` (with `approve`: the runbook and the CLI line),
 * `wait` (a freeze, calendar event or Change Calendar: `until`), `fix-alarm` (the alarms named in
 * `why`) or `fix-gate`. Published once per cause (gates/notice.ts: the notice's key), not on every
 * run while held.
 */
export interface ReleaseWaitingEvent extends Pick<
  HoldNotice,
  'cause' | 'lift' | 'why' | 'until' | 'todo' | 'approve'
> {
  /** The delivery whose run found it held (for a wave: the first member that did). */
  readonly delivery: string;
  /** The revision held (`<tag>@sha256:…`), when the registry could be reached. */
  readonly revision?: string;
  readonly gate: string;
  readonly blocks: BlockingGate['blocks'];
  /** A wave gate: the rollout, the wave (1-based) and the members it holds. */
  readonly rollout?: string;
  readonly wave?: number;
  readonly deliveries?: readonly string[];
  /** When the gate's schedule, window, freeze or calendar opens it, if known. */
  readonly opensAt?: string;
  /** The whole notice (what the approval topic is sent). */
  readonly message: string;
  readonly time: string;
}

/** The detail types of a rollout's events. */
export const ROLLOUT_EVENTS = {
  waveStarted: 'Rollout Wave Started',
  halted: 'Rollout Halted',
  complete: 'Rollout Complete',
} as const;
export type RolloutEventType = (typeof ROLLOUT_EVENTS)[keyof typeof ROLLOUT_EVENTS];

/**
 * A rollout's wave started taking the revision, the rollout halted (why, where, by whom), or every
 * wave is Ready at it. Each is published once per generation (a halt once per halt recorded).
 */
export interface RolloutEvent {
  readonly rollout: string;
  readonly generation: number;
  readonly revision: string;
  readonly kind: 'rollout' | 'rollback';
  /** The wave (1-based) that started, or where the rollout halted. */
  readonly wave?: number;
  readonly waves: number;
  readonly delivery?: string;
  readonly why?: string;
  readonly by?: string;
  readonly message: string;
  readonly time: string;
}

/** Where reconcile events go besides the table: EventBridge in AWS. */
export interface EventSink {
  publish(event: ReconcileEvent): Promise<void>;
  /** `Release Waiting` events. @default - not published */
  releaseWaiting?(event: ReleaseWaitingEvent): Promise<void>;
  /** `Rollout Wave Started`, `Rollout Halted`, `Rollout Complete`. @default - not published */
  rollout?(detailType: RolloutEventType, event: RolloutEvent): Promise<void>;
}
