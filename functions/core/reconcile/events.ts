import type { ReconcileEvent } from '../store/events.ts';
import type { BlockingGate } from '../store/status.ts';

/** The detail type of the event a delivery newly held at a gate publishes. */
export const RELEASE_WAITING = 'Release Waiting';

/**
 * `Release Waiting`: a delivery has just become held at a gate (closed, or open only for another
 * revision or other deliveries), and how to let it through. Published once, on the transition into
 * waiting, not on every run while held.
 */
export interface ReleaseWaitingEvent {
  readonly delivery: string;
  /** The revision held (`<tag>@sha256:…`), when the registry could be reached. */
  readonly revision?: string;
  readonly gate: string;
  readonly blocks: BlockingGate['blocks'];
  /** When the gate's schedule or window opens it, if known. */
  readonly opensAt?: string;
  /** How to approve it: the gate's Systems Manager runbook (in the console) and the CLI line. */
  readonly approve: { readonly runbook?: string; readonly cli: string };
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
