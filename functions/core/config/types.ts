/** The parsed, normalised configuration: defaults filled in, durations in milliseconds. */

import type { NotationVerification } from '../oci/notation-policy.ts';

export type GateState = 'open' | 'closed';
export type GateAction = 'open' | 'close';

export interface GateSchedule {
  /** EventBridge Scheduler cron, six fields: `min hour day-of-month month day-of-week year`. */
  cron: string;
  /** IANA time zone; default `UTC`. */
  timeZone: string;
  action: GateAction;
  /** How long the scheduled request lasts; none = the gate's own window. */
  windowMs?: number;
  /**
   * Set when the window (the schedule's, else the gate's) is written in whole days (`1d`): a
   * firing lasts that many calendar days in `timeZone`, to the same wall-clock time (a repeated
   * one read as its later occurrence), not windowMs.
   */
  windowDays?: number;
}

/** A one-off span the gate is closed for, whatever its requests say. */
export interface GateFreeze {
  /** Local date-time in `timeZone` (`YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]`): the freeze starts then. */
  from: string;
  /** Local date-time in `timeZone`, after `from`: the freeze ends then (the gate is closed up to it). */
  to: string;
  /** IANA time zone; default `UTC`. */
  timeZone: string;
  reason?: string;
}

/** A set of holidays (date-holidays' data) each closing the gate from local midnight to the next. */
export interface GateHolidays {
  /** ISO 3166-1 alpha-2 code, as date-holidays names it (`DE`). */
  country: string;
  /** A region (state) of the country, as date-holidays names it (`BY`). */
  region?: string;
  /** Which of the library's holiday types close the gate; default `[public]`. */
  types: ('public' | 'bank' | 'school' | 'optional' | 'observance')[];
  /** IANA time zone the days are read in; default the library's first zone for the region (else the country). */
  timeZone: string;
}

/** An RFC 5545 calendar whose events each close the gate for their span: given inline, or read live. */
export type GateCalendar = InlineGateCalendar | LiveGateCalendar;

/** A calendar whose text is in the gate's spec. */
export interface InlineGateCalendar {
  /** Names the calendar in messages: its own name, or its file's base name. */
  name: string;
  /** The iCalendar text (a file is read into it when the config is loaded or the app synthesized). */
  ics: string;
  /** IANA time zone of its all-day events and floating times; default `UTC`. */
  timeZone: string;
}

/** Where a live calendar is read from: an S3 object, or an HTTPS URL on a host `calendarHosts` allows. */
export type CalendarSource = { s3: { bucket: string; key: string } } | { url: string };

/**
 * A calendar read by the functions from its source at each evaluation (a conditional GET with its
 * ETag); the last good copy is kept in the table with its age.
 */
export interface LiveGateCalendar {
  /** Names the calendar in messages: its own name, or its object's (URL's) base name. */
  name: string;
  source: CalendarSource;
  /** IANA time zone of its all-day events and floating times; default `UTC`. */
  timeZone: string;
  /** How old the last good copy may get (not confirmed by its source) before the gate counts as closed; default 24h. */
  maxStalenessMs: number;
}

export interface Gate {
  name: string;
  default: GateState;
  /** How long a request lasts before the gate returns to default; none = until the next request. */
  windowMs?: number;
  description?: string;
  schedules: GateSchedule[];
  /** `revision`: an open request must name the revision it approves (`--revision`); `any`: it need not. */
  approval: GateApproval;
  /** Distinct verified people whose open requests it takes to open the gate; default 1. */
  approvers: number;
  /**
   * Roles whose session names name people (a trust policy enforces `sts:RoleSessionName` or
   * `sts:SourceIdentity`): their sessions count as different approvers. Any other role counts as
   * one approver however many sessions ask; IAM Identity Center roles count per session (AWS
   * sets the name).
   */
  sessionNamedRoles?: string[];
  /** Refuses open and close requests that carry only a claim (direct invocations, console test events); schedules still count. */
  requireVerified?: boolean;
  /**
   * Refuse an approval of a revision from whoever pushed its digest (recorded from CloudTrail's
   * ECR PutImage); needs `approval: 'revision'`. Absent: false.
   */
  preventSelfApproval?: boolean;
  /** One-off spans the gate is closed for (an approved open request does not lift them). */
  freezes?: GateFreeze[];
  /** iCalendar calendars: the gate is closed during each event (an approved open request does not lift it). */
  calendars?: GateCalendar[];
  /** SSM Change Calendars (names or ARNs): the gate is closed while any of them is CLOSED, or cannot be read. */
  changeCalendars?: string[];
  /** Public holidays (or other types) of a country or region: the gate is closed on each, whatever its requests say. */
  holidays?: GateHolidays;
  /**
   * CloudWatch alarms (names, or ARNs) that close the gate while any of them is in ALARM (or
   * INSUFFICIENT_DATA, per `insufficientData`), whatever the requests say; an alarm that cannot be
   * read closes it too.
   */
  alarms?: string[];
  /** What an alarm in INSUFFICIENT_DATA does to the gate (set only with `alarms`); absent: `closed`. */
  insufficientData?: GateState;
  /** The longest a break-glass override of this gate may last; absent: DEFAULT_MAX_OVERRIDE_MS (4 h). */
  maxOverrideMs?: number;
  /**
   * What the gate holds while closed: always new revisions; with `rollback`, a rollback to a
   * revision the delivery applied before (`sluice rollback`) too. Absent: `['revisions']`.
   */
  holds?: HeldAction[];
}

/** An action a closed gate may hold: a new revision, or a rollback to a revision applied before. */
export type HeldAction = 'revisions' | 'rollback';

export type GateApproval = 'any' | 'revision';

export type SourceProvider = 'aws' | 'generic';

export interface DeliverySource {
  /** `oci://host/repository` */
  url: string;
  /** Exactly one of tag, semver and digest is set (`tag: 'latest'` when none was given). */
  tag?: string;
  semver?: string;
  /** `sha256:<64 hex>` */
  digest?: string;
  provider: SourceProvider;
  /** Plain HTTP to the registry. */
  insecure: boolean;
  layerMediaType?: string;
  /**
   * Flux's `verify`: cosign signatures checked before anything is used, against these PEM public
   * keys, against the public half of this AWS KMS key (read with kms:GetPublicKey), or keyless:
   * a Fulcio certificate naming this identity, logged in Rekor, checked against a Sigstore trusted root.
   */
  verify?:
    | { provider: 'cosign'; publicKeys: string[] }
    | { provider: 'cosign'; kmsKeyArn: string }
    | {
        provider: 'cosign';
        /** One of issuer/issuerRegExp and one of subject/subjectRegExp; a pattern matches the whole value. */
        keyless: { issuer?: string; issuerRegExp?: string; subject?: string; subjectRegExp?: string };
        /** Sigstore's TrustedRoot JSON; the public-good root shipped with sluice when unset. */
        trustedRoot?: string;
      }
    | NotationVerification;
}

export interface EksClusterTarget {
  eks: { name: string; region: string; roleArn?: string };
}
export interface KubeconfigClusterTarget {
  kubeconfig: string;
  context?: string;
}
export type ClusterTarget = EksClusterTarget | KubeconfigClusterTarget;

export type GateScope = 'all' | 'revisions';
export interface GateRef {
  name: string;
  blocks: GateScope;
}

export type DeletionPolicy = 'Delete' | 'Orphan';

/** A delivery that must be Ready (and, with a soak, Ready at its revision for that long) before another is applied. */
export interface DeliveryDependency {
  name: string;
  /** How long the dependency must have been Ready at its current revision; none = Ready is enough. */
  soakMs?: number;
}

export interface Delivery {
  name: string;
  source: DeliverySource;
  /** Relative path inside the artifact, normalised (`.`, `overlays/prod`). */
  path: string;
  prune: boolean;
  intervalMs: number;
  retryIntervalMs?: number;
  timeoutMs: number;
  wait: boolean;
  suspend: boolean;
  cluster: ClusterTarget;
  gates: GateRef[];
  /** Flux's `.spec.dependsOn`: deliveries that must be Ready before this one is applied. */
  dependsOn: DeliveryDependency[];
  deletionPolicy: DeletionPolicy;
  allowEmpty: boolean;
  targetNamespace?: string;
  commonMetadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  postBuild?: { substitute?: Record<string, string> };
  /** Flux's `.spec.patches`: applied in order to the built objects. */
  patches?: DeliveryPatch[];
  /** Flux's `.spec.images`: container image overrides applied to the built objects. */
  images?: ImageOverride[];
  /** The mass-deletion brake; DEFAULTS.pruneLimit when not set. */
  pruneLimit?: PruneLimit;
  /** A gate whose open state lets a run prune past `pruneLimit`. */
  pruneLimitGate?: string;
  /**
   * How many reconciles may apply to this delivery's cluster at once, counting every delivery on
   * it (all of them must agree); DEFAULTS.clusterConcurrency when not set.
   */
  clusterConcurrency?: number;
  /** Who sluice acts as in the cluster; sluice's own identity when not set. */
  impersonate?: Impersonation;
  /** Flux's `.spec.healthCheckExprs`: with `wait`, CEL decides the health of objects of these kinds. */
  healthCheckExprs?: HealthCheckExpr[];
  /** Flux's `.spec.decryption`: SOPS-encrypted documents are decrypted after the build. */
  decryption?: Decryption;
}

/**
 * CEL expressions that decide the health of objects of one group and kind (any version), in
 * place of kstatus's rules. Each sees the live object's top-level fields as variables (`status`,
 * `metadata`, `spec`, …). The first that is true of `inProgress`, `failed` and `current`, in that
 * order, decides; when none is, the object is in progress.
 */
export interface HealthCheckExpr {
  /** `group/version` (`example.com/v1`), or `v1` for the core group. */
  apiVersion: string;
  kind: string;
  current: string;
  inProgress?: string;
  failed?: string;
}

/**
 * Flux's `decryption: { provider: sops }`: the keys a delivery may decrypt its SOPS documents with.
 * A SOPS document whose data key none of them opens fails the run, naming the file.
 */
export interface Decryption {
  provider: 'sops';
  /** KMS key ARNs (`arn:aws:kms:<region>:<account>:key/<id>`) the data keys may be decrypted with. */
  kmsKeyArns: string[];
  /** A Secrets Manager secret holding age identities (`AGE-SECRET-KEY-1…`, one a line). */
  ageKeySecretArn?: string;
  /**
   * The namespaces a decrypted Secret may land in, when the delivery has no `targetNamespace`
   * (default: `default` only). sops's MAC does not cover keys, so a file's namespace is not
   * trusted on its own.
   */
  namespaces?: string[];
}

/** The most one run may prune: a share of the inventory (0-100) or a number of objects. */
export type PruneLimit = { percent: number } | { count: number };

/** An identity sluice impersonates (`Impersonate-User`) for every request of a delivery. */
export type Impersonation = { serviceAccount: { name: string; namespace: string } } | { user: string };

/** Which objects a patch applies to; names, kinds and namespaces are anchored regular expressions, as in kustomize. */
export interface PatchTarget {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
  annotationSelector?: string;
}

export interface DeliveryPatch {
  /** A strategic merge patch (YAML object) or a JSON6902 patch (list of operations, YAML or JSON). */
  patch: string;
  /** Required for JSON6902; without it a strategic merge patch applies to the object it names. */
  target?: PatchTarget;
}

export interface ImageOverride {
  /** The image name to match, without tag or digest (`nginx`, `ghcr.io/org/app`). */
  name: string;
  newName?: string;
  newTag?: string;
  /** Pins the image (`sha256:…`); set with newTag, both are kept as `name:tag@digest`. */
  digest?: string;
}

export interface SluiceConfig {
  gates: Gate[];
  /** Hosts a live calendar may be read from over HTTPS (none: only S3 calendars). */
  calendarHosts?: string[];
  deliveries: Delivery[];
  /** Release waves across deliveries (none: each delivery resolves its own source). */
  rollouts: Rollout[];
}

/** What a newer revision of a rollout's source does while a rollout is under way. */
export type RolloutSupersede = 'wait' | 'restart';

/** One wave of a rollout: the deliveries that take the rollout's revision together. */
export interface RolloutWave {
  /** The delivery names or patterns as written (`canary-*`, `eu-?`, `*`). */
  patterns: string[];
  /**
   * The deliveries this wave takes, in config order: those its patterns match that no earlier
   * wave of the rollout took.
   */
  deliveries: string[];
  /** How long every delivery of the wave must have been Ready at the revision before the next wave starts. */
  soakMs?: number;
  /** A gate (one of `gates`) that holds the wave from starting while it is closed (an approval may name the revision). */
  gate?: string;
}

/**
 * A release wave: one revision of one source, taken by a fleet of deliveries in ordered waves,
 * each starting when the one before it is Ready at that revision and has soaked.
 */
export interface Rollout {
  name: string;
  /** The repository and tag or semver range the rollout's revision is resolved from; its members use it, not their own. */
  source: DeliverySource;
  waves: RolloutWave[];
  /**
   * The most deliveries of a wave taking the revision at once (each takes a place before it takes
   * the revision and gives it back once Ready at it), offered in the wave's order; none = the whole
   * wave (within each cluster's limit).
   */
  maxParallel?: number;
  /**
   * `wait`: a newer revision starts after the current rollout has finished or been halted;
   * `restart`: at once. Either way a halt a person recorded holds a newer revision too, until the
   * resume (or a rollback); a halt sluice recorded on a failure is superseded by the next push.
   */
  supersede: RolloutSupersede;
}
