// The vocabulary of a delivery's status: what a run reports and `sluice status` shows, whatever
// stores it (store/status.ts) or prints it.
import type { FailureReason } from '../errors.ts';
import type { RollbackRequest } from './rollback.ts';
import type { RolloutMark } from './rollout.ts';

export type StatusReason =
  | FailureReason
  | 'ReconciliationSucceeded'
  | 'Progressing'
  | 'DependencyNotReady'
  /** Held: the cluster's concurrency limit was reached; retried shortly. */
  | 'ClusterBusy'
  /** Held at its current revision: its wave of a rollout has not started yet (or its turn in the wave). */
  | 'RolloutWaiting'
  /** Held at its current revision: its rollout is halted (`sluice rollout status`). */
  | 'RolloutHalted';

/** A closed gate holding a delivery, and when it is expected to open (if known). */
export interface BlockingGate {
  readonly name: string;
  readonly blocks: 'all' | 'revisions';
  readonly opensAt?: string;
  /** Set when the gate is open, but only for another revision than the one held, or for other deliveries. */
  readonly openFor?: {
    readonly revision?: string;
    readonly deliveries?: readonly string[];
    readonly approvedBy: string;
  };
  /** The gate opens for one named revision at a time (`approval: revision`). */
  readonly approvesRevisions?: boolean;
  /** Why the gate's stored request cannot be evaluated (so it counts as closed). */
  readonly problem?: string;
  /** The freeze, calendar event or change calendar holding it closed (no open request lifts it). */
  readonly closedBy?: string;
  /** What `closedBy` is: a freeze, an `.ics` calendar event or an SSM Change Calendar. */
  readonly closedByCause?: 'freeze' | 'calendar' | 'change-calendar';
  /** Closed by the gate's own `schedules` (a cron close, e.g. No-Deploy-Friday), not by a person: a planned hold. */
  readonly closedBySchedule?: boolean;
  /** The CloudWatch alarms closing the gate (`alarms`), whatever its requests say. */
  readonly closedByAlarms?: readonly AlarmHold[];
  /** The gate holds a rollback too (`holds: [revisions, rollback]`); otherwise a rollback passes it. */
  readonly holdsRollback?: boolean;
}

/** A CloudWatch alarm holding its gate closed, and why. */
export interface AlarmHold {
  /** As the gate names it: a name or an ARN. */
  readonly alarm: string;
  /** `ALARM` or `INSUFFICIENT_DATA` as CloudWatch reports it; `MISSING` or `UNREADABLE` when it cannot be read. */
  readonly state: 'ALARM' | 'INSUFFICIENT_DATA' | 'MISSING' | 'UNREADABLE';
  /** `in ALARM since 2026-03-26T11:00:00Z`, `does not exist in …`, `could not be read: …` */
  readonly why: string;
}

/** What the last reconcile did, as counts of objects. */
export interface ChangeCounts {
  readonly created: number;
  readonly configured: number;
  readonly unchanged: number;
  readonly deleted: number;
}

/** A delivery's status, named like Flux's Kustomization status where Flux has the field. */
export interface DeliveryStatus {
  readonly ready: boolean;
  readonly reason: StatusReason;
  readonly message: string;
  readonly lastAppliedRevision?: string;
  /**
   * The applied artifact's `org.opencontainers.image.revision` (the Git revision it was pushed
   * from, e.g. `main@sha1:…`), as Flux's `lastAppliedOriginRevision`; absent when it has none.
   */
  readonly lastAppliedOriginRevision?: string;
  /**
   * Who signed the applied artifact, when the source has `verify`: the provider and the signer (a
   * public key's `sha256:` fingerprint, a KMS key ARN, a keyless `<subject> (issuer <issuer>)`).
   */
  readonly lastAppliedSignedBy?: { readonly provider: 'cosign' | 'notation'; readonly signer: string };
  readonly lastAttemptedRevision?: string;
  readonly inventorySize?: number;
  readonly changes?: ChangeCounts;
  /** The closed gates holding the delivery (set while `reason` is `GateClosed`). */
  readonly blockedBy?: BlockingGate[];
  /** When the delivery was first held by a gate, kept across blocked runs (for alarms). */
  readonly blockedSince?: string;
  /**
   * While held by something unplanned (not only freezes, calendars, Change Calendars and the
   * gates' own scheduled closes): when that hold began, kept across such runs (the blocked alarm).
   */
  readonly unplannedBlockedSince?: string;
  /** A newer revision held by a change freeze (`blocks: revisions`). */
  readonly pendingRevision?: string;
  /** When a failed delivery is retried (`retryInterval`), if a retry is scheduled. */
  readonly nextRetryAt?: string;
  /**
   * CRDs and Namespaces the applied revision leaves out, kept (not deleted) because they hold
   * objects the prune does not delete: each named with the first objects holding it.
   */
  readonly kept?: readonly KeptContainerStatus[];
  readonly lastReconcileAt: string;
  readonly lastSuccessAt?: string;
  /**
   * While Ready: when it became Ready at `lastAppliedRevision` (kept by the runs that find it so),
   * which a dependent's `soak` counts from. Absent while not Ready.
   */
  readonly readySince?: string;
  /** While held by dependencies that are only soaking: when the last soak ends (the run is retried then). */
  readonly soakingUntil?: string;
  readonly durationMs?: number;
  /** For a member of a rollout: the generation and wave its status counts toward. */
  readonly rolloutMark?: RolloutMark;
  /** The last rollback asked for (`sluice rollback`), written by the gate function, never by a run. */
  readonly rollback?: RollbackRequest;
  /** The id of the rollback a run settled: it applied it, or applied a newer revision instead. */
  readonly rollbackSettled?: string;
}

/** A kept CRD or Namespace, as the status records it. */
export interface KeptContainerStatus {
  /** `Namespace/<name>` or `CustomResourceDefinition/<name>`. */
  readonly container: string;
  /** The first objects it holds that the prune does not delete (`Kind/namespace/name`). */
  readonly objects: readonly string[];
}
