import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { DeliveryInput, GateInput, RolloutInput } from '../functions/core/config/index.ts';

/** Where a delivery's artifact comes from: an OCI repository (Flux's OCIRepository). */
export interface SluiceSource {
  /** `oci://<host>/<repository>`, e.g. `oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/app`. */
  readonly url: string;
  /**
   * The tag to deploy. Set at most one of tag, semver and digest.
   * @default 'latest' (when neither semver nor digest is set)
   */
  readonly tag?: string;
  /**
   * A semver range; the highest matching tag is deployed (e.g. `^1.4`).
   * @default - no range
   */
  readonly semver?: string;
  /**
   * A pinned manifest digest, `sha256:<64 hex>`.
   * @default - no digest
   */
  readonly digest?: string;
  /**
   * How to authenticate: `aws` uses ECR tokens (and IAM read access on the repository), `generic`
   * anonymous access.
   * @default 'aws' for ECR hosts, else 'generic'
   */
  readonly provider?: 'aws' | 'generic';
  /**
   * Plain HTTP to the registry.
   * @default false
   */
  readonly insecure?: boolean;
  /**
   * The media type of the layer holding the manifests.
   * @default 'application/vnd.cncf.flux.content.v1.tar+gzip'
   */
  readonly layerMediaType?: string;
  /**
   * Refuse an artifact unless it carries a cosign signature (`cosign sign --key`) by one of these
   * PEM public keys, or by this AWS KMS key; Flux's `verify` with `provider: cosign`.
   * @default - artifacts are not verified
   */
  readonly verify?: SluiceSignatureVerification;
}

/**
 * Signature verification of a delivery's artifacts: cosign (by PEM public keys or by one KMS key)
 * or Notation (a trust policy and its trust stores, or AWS Signer signing profiles).
 */
export interface SluiceSignatureVerification {
  readonly provider: 'cosign' | 'notation';
  /**
   * PEM public keys (the contents of `cosign.pub`).
   * @default - none: set this or kmsKeyArn, not both
   */
  readonly publicKeys?: string[];
  /**
   * The AWS KMS key that signs (`cosign sign --key awskms:///<this ARN>`): its ARN, not an alias
   * (of this stack's partition; any Region or account whose key policy lets this stack read it).
   * The reconcile function is granted kms:GetPublicKey on it and reads its public half from KMS.
   * @default - none: set this or publicKeys, not both
   */
  readonly kmsKeyArn?: string;
  /**
   * Keyless (`cosign sign` with an OIDC identity, e.g. from CI): the Fulcio certificate must name
   * this issuer and subject, each exact or a Go regular expression matching the whole value. Needs
   * no AWS permission. docs/security.md says what is checked.
   * @default - none: set one of publicKeys, kmsKeyArn and keyless
   */
  readonly keyless?: SluiceKeylessIdentity;
  /**
   * Sigstore's TrustedRoot JSON (e.g. `readFileSync('trusted_root.json', 'utf8')`) that keyless
   * signatures are checked against: a private Sigstore, or a fresher public-good root.
   * @default - the Sigstore public-good trusted root shipped with sluice
   */
  readonly trustedRoot?: string;
  /**
   * Notation: one trust policy statement for this source (signatureVerification.level strict or
   * permissive, trustStores `ca:<name>`, trustedIdentities `x509.subject: …`).
   * @default - none: with provider notation, set this (and trustStores) or awsSigner
   */
  readonly trustPolicy?: SluiceNotationTrustPolicy;
  /**
   * Notation: the trust stores the policy names, `<type>:<name>` → PEM CA certificates.
   * @default - none
   */
  readonly trustStores?: Record<string, string[]>;
  /**
   * Notation: AWS Signer signatures by these signing profiles, chained to this root and checked
   * with signer:GetRevocationStatus (the reconcile function is granted it).
   * @default - none
   */
  readonly awsSigner?: SluiceAwsSignerVerification;
}

/** A Notation trust policy statement (the Notary Project's trust policy), for one source. */
export interface SluiceNotationTrustPolicy {
  /** @default - the policy's own name is not used */
  readonly name?: string;
  /** @default - the source's repository */
  readonly registryScopes?: string[];
  readonly signatureVerification: { readonly level: 'strict' | 'permissive' };
  readonly trustStores: string[];
  readonly trustedIdentities: string[];
}

/** AWS Signer signing profiles whose Notation signatures are trusted. */
export interface SluiceAwsSignerVerification {
  /** Signing profile ARNs, or profile version ARNs. */
  readonly profileArns: string[];
  /** AWS Signer's Notation root certificate(s), PEM, as AWS publishes them. */
  readonly rootCertificates: string[];
}

/** Who a keyless signature's certificate must name: one of each pair (Flux's `matchOIDCIdentity`). */
export interface SluiceKeylessIdentity {
  /**
   * The OIDC issuer, exactly (e.g. `https://token.actions.githubusercontent.com`).
   * @default - none: set this or issuerRegExp
   */
  readonly issuer?: string;
  /**
   * A Go (RE2) regular expression the whole issuer must match.
   * @default - none: set this or issuer
   */
  readonly issuerRegExp?: string;
  /**
   * The certificate's subject (SAN), exactly (e.g. a workflow `https://github.com/org/repo/.github/workflows/release.yml@refs/heads/main`).
   * @default - none: set this or subjectRegExp
   */
  readonly subject?: string;
  /**
   * A Go (RE2) regular expression the whole subject must match.
   * @default - none: set this or subject
   */
  readonly subjectRegExp?: string;
}

/** An EKS cluster by name, as in the config file. sluice cannot create its access entry. */
export interface SluiceEksClusterRef {
  readonly eks: {
    readonly name: string;
    readonly region: string;
    /**
     * A role to assume for the cluster (e.g. in another account).
     * @default - the reconcile function's own role
     */
    readonly roleArn?: string;
  };
}

/**
 * The cluster a delivery applies to: by name (grant `Sluice.deployerRole` access yourself), or an
 * `eks.ICluster` (aws-eks-v2; `Cluster.fromClusterAttributes` for an existing one), for which
 * the construct creates an access entry.
 */
export type SluiceClusterTarget = SluiceEksClusterRef | eks.ICluster;

export interface SluiceGateRef {
  readonly name: string;
  /**
   * `all`: nothing is applied or pruned while the gate is closed; `revisions`: new revisions
   * are held, the last applied one is still re-applied (a change freeze).
   * @default 'all'
   */
  readonly blocks?: 'all' | 'revisions';
}

/** A delivery depended on, with how long it must have been Ready at its current revision. */
export interface SluiceDependency {
  /** A delivery of `SluiceProps.deliveries`. */
  readonly name: string;
  /**
   * How long the dependency must have been Ready at its current revision (more than 0, at most
   * 30 days).
   * @default - Ready is enough
   */
  readonly soak?: Duration;
}

/** One delivery: the config file's `deliveries[]` entry, durations as `Duration`. */
export interface SluiceDelivery {
  /** A DNS label (lowercase letters, digits, `-`): names the delivery in the table, labels and metrics. */
  readonly name: string;
  readonly source: SluiceSource;
  /**
   * The directory inside the artifact to build.
   * @default '.'
   */
  readonly path?: string;
  /**
   * Delete objects that a new revision no longer contains.
   * @default false
   */
  readonly prune?: boolean;
  /**
   * How often to reconcile (drift correction); at least one minute, in whole minutes.
   * @default Duration.minutes(5)
   */
  readonly interval?: Duration;
  /**
   * Kept for config-file parity; the interval schedule is what retries.
   * @default - the interval
   */
  readonly retryInterval?: Duration;
  /**
   * How long apply, health checks and kustomize builds may take; must leave a minute of the
   * reconcile function's timeout.
   * @default Duration.minutes(5)
   */
  readonly timeout?: Duration;
  /**
   * Wait until the applied objects are ready.
   * @default false
   */
  readonly wait?: boolean;
  /**
   * Stop reconciling (the interval schedule is disabled).
   * @default false
   */
  readonly suspend?: boolean;
  readonly cluster: SluiceClusterTarget;
  /**
   * Gates that hold this delivery; each must be one of `SluiceProps.gates`.
   * @default - none
   */
  readonly gates?: SluiceGateRef[];
  /**
   * Deliveries (names in `SluiceProps.deliveries`) that must be Ready, at the revision they last
   * attempted, before this one is applied; when one succeeds, the deliveries waiting on it
   * reconcile at once. Flux's `dependsOn`. `{ name, soak }` also waits until the dependency has
   * been Ready at its current revision for `soak` (the held run is retried when the soak ends).
   * @default - none
   */
  readonly dependsOn?: (string | SluiceDependency)[];
  /**
   * What removing the delivery does to its objects.
   * @default 'Delete' when prune is true, else 'Orphan'
   */
  readonly deletionPolicy?: 'Delete' | 'Orphan';
  /**
   * Allow a revision with no objects to prune everything.
   * @default false
   */
  readonly allowEmpty?: boolean;
  /**
   * Put every namespaced object in this namespace.
   * @default - as in the manifests
   */
  readonly targetNamespace?: string;
  /**
   * Labels and annotations added to every object.
   * @default - none
   */
  readonly commonMetadata?: DeliveryInput['commonMetadata'];
  /**
   * `${var}` substitution after the build.
   * @default - none
   */
  readonly postBuild?: DeliveryInput['postBuild'];
  /**
   * Strategic merge or JSON6902 patches applied to the built objects (Flux's `.spec.patches`).
   * @default - none
   */
  readonly patches?: DeliveryInput['patches'];
  /**
   * Container image overrides (Flux's `.spec.images`).
   * @default - none
   */
  readonly images?: DeliveryInput['images'];
  /**
   * The mass-deletion brake: a run that would prune more than this (`'50%'` of the inventory, or
   * a number of objects like `20`) is held with reason PruneLimitExceeded, nothing applied or pruned.
   * @default '50%' (for inventories of 10 objects or more)
   */
  readonly pruneLimit?: DeliveryInput['pruneLimit'];
  /**
   * A gate (one of `SluiceProps.gates`) that, while open, lets runs prune past `pruneLimit`.
   * @default - none: raise pruneLimit to allow a mass deletion
   */
  readonly pruneLimitGate?: string;
  /**
   * How many reconciles may apply to this delivery's cluster at once, counting every delivery on
   * it (deliveries on one cluster must agree); a run that finds them all taken waits up to 20
   * seconds, then is held (status `ClusterBusy`) and retried.
   * @default 10 (sized for an EKS API server's API Priority and Fairness defaults; see DEFAULTS.clusterConcurrency)
   */
  readonly clusterConcurrency?: number;
  /**
   * Act as this service account of `targetNamespace` in the cluster (Flux's `serviceAccountName`).
   * @default - sluice's own identity
   */
  readonly serviceAccountName?: string;
  /**
   * Act as a service account (`{ serviceAccount: { name, namespace } }`) or a user (`{ user }`).
   * @default - sluice's own identity
   */
  readonly impersonate?: DeliveryInput['impersonate'];
  /**
   * With `wait`, CEL expressions decide the health of objects of the kinds they name, in place of
   * kstatus's rules (Flux's `healthCheckExprs`). Checked at synth: an expression that does not
   * compile fails it.
   * @default - none: kstatus's rules for every kind
   */
  readonly healthCheckExprs?: SluiceHealthCheckExpr[];
  /**
   * Decrypt the SOPS-encrypted documents of the artifact (Flux's `decryption` with `provider: sops`),
   * in memory, after the build. The reconcile function is granted `kms:Decrypt` on exactly
   * `kmsKeyArns` and `secretsmanager:GetSecretValue` on `ageKeySecretArn`.
   * @default - no decryption: an artifact with a SOPS-encrypted document fails to build
   */
  readonly decryption?: SluiceDecryption;
}

/**
 * CEL expressions for the health of objects of one group and kind, any version. Each sees the
 * live object's top-level fields as variables: `status.conditions.exists(c, c.type == 'Synced' &&
 * c.status == 'True')`. The first that is true of inProgress, failed and current, in that order,
 * decides; when none is, the object is in progress.
 */
export interface SluiceHealthCheckExpr {
  /** `group/version`, e.g. `example.com/v1` (`v1` for the core group). */
  readonly apiVersion: string;
  readonly kind: string;
  /** True when the object is ready. */
  readonly current: string;
  /**
   * True while the object is still on its way.
   * @default - none
   */
  readonly inProgress?: string;
  /**
   * True when the object has failed: the run fails at once, naming it.
   * @default - none
   */
  readonly failed?: string;
}

/** SOPS decryption keys of a delivery. */
export interface SluiceDecryption {
  readonly provider: 'sops';
  /**
   * KMS key ARNs (`arn:aws:kms:<region>:<account>:key/<id>`, not aliases) the files' data keys
   * may be decrypted with. KMS itself checks the encryption context sops recorded.
   * @default - none
   */
  readonly kmsKeyArns?: string[];
  /**
   * A Secrets Manager secret whose string holds age identities (`AGE-SECRET-KEY-1…`, one a line,
   * `#` comments allowed, as `age-keygen` writes them).
   * @default - none
   */
  readonly ageKeySecretArn?: string;
  /**
   * The namespaces a decrypted Secret may land in when the delivery has no `targetNamespace`.
   * sops's MAC covers a file's values, not its keys, so the namespace a file names is not trusted
   * on its own: a Secret settling anywhere else is refused.
   * @default - `default` only (with `targetNamespace`: that namespace only)
   */
  readonly namespaces?: string[];
}

export interface SluiceGateSchedule {
  /** EventBridge Scheduler cron, six fields: `min hour day-of-month month day-of-week year`, e.g. `0 0 ? * FRI *`. */
  readonly cron: string;
  /**
   * IANA time zone the cron is read in, e.g. `Europe/Berlin`.
   * @default 'UTC'
   */
  readonly timeZone?: string;
  readonly action: 'open' | 'close';
  /**
   * How long the scheduled request lasts. Given in days (`Duration.days(1)`), it lasts that many
   * calendar days in `timeZone`, to the same wall-clock time: 25 hours across clocks going back.
   * @default - the gate's window
   */
  readonly window?: Duration;
}

/** One gate: the config file's `gates[]` entry, durations as `Duration`. */
export interface SluiceGate {
  readonly name: string;
  /** The state when no request is in force. */
  readonly default: 'open' | 'closed';
  /**
   * How long a request lasts before the gate returns to its default. A schedule without a window
   * of its own takes this one; in days (`Duration.days(1)`), as calendar days in its time zone.
   * @default - until the next request
   */
  readonly window?: Duration;
  /** @default - none */
  readonly description?: string;
  /**
   * EventBridge Scheduler schedules that open or close the gate.
   * @default - none
   */
  readonly schedules?: SluiceGateSchedule[];
  /**
   * `revision`: an open request must name the revision it approves (`sluice gate open --revision`),
   * and the gate opens only for that revision. `any`: an open request may leave it out.
   * @default 'any'
   */
  readonly approval?: 'any' | 'revision';
  /**
   * How many distinct verified people must ask to open the gate before it opens: 2 is a
   * two-person rule. At most 6. People are told apart by a key they cannot choose: an IAM user's
   * ARN; an IAM Identity Center role plus its session name (AWS sets it); any other role counts
   * once, whatever its session names, unless it is listed in `sessionNamedRoles`.
   * @default 1
   */
  readonly approvers?: number;
  /**
   * Roles (ARNs: a bare name would match the role of that name in every account) whose session names name people, so that each session counts as a
   * different approver. List a role only when its trust policy makes the session name the
   * person's (`sts:RoleSessionName` = `${aws:username}`, or `sts:SourceIdentity`).
   * @default - none: sessions of one role count as one approver
   */
  readonly sessionNamedRoles?: string[];
  /**
   * Refuses open and close requests that only claim who sent them (a direct invocation, a
   * console test event): only verified requests (signed, or approved in the gate's runbook) and
   * the gate's own schedules count.
   * @default false
   */
  readonly requireVerified?: boolean;
  /**
   * Refuse an approval of a revision from whoever pushed its digest to ECR, as CloudTrail's
   * `PutImage` record names them (an EventBridge rule records each push). Needs
   * `approval: 'revision'` and a CloudTrail trail logging management events in the account and
   * region of the repositories (`cdk synth` warns). Approvals are compared by approver key (an
   * IAM user, an Identity Center user, or the role), and only verified approvals are taken.
   * @default false
   */
  readonly preventSelfApproval?: boolean;
  /**
   * CloudWatch alarms (at most 100) that close the gate while any of them is in ALARM, whatever
   * the requests say: an open request cannot lift an alarm. An alarm that does not exist or cannot
   * be read closes the gate too. Read with `DescribeAlarms` at each evaluation; each alarm's state
   * changes reconcile the deliveries using the gate. Each is an `IAlarm` (a `cloudwatch.Alarm` of
   * the app, or `Alarm.fromAlarmArn`), a name of an alarm in this stack's account and region
   * (`alarm.alarmName`, a token, is taken as one), or an ARN. An alarm of another account or region
   * is refused at synth: sluice reads alarms where it runs, and their state changes reach only
   * their own account and region. Make the alarm here on the other account's metric (CloudWatch
   * cross-account observability) instead. The gate's spec is written after the alarms of this
   * stack it names, so a first deploy finds them.
   * @default - none
   */
  readonly alarms?: (string | cloudwatch.IAlarm)[];
  /**
   * What an alarm in INSUFFICIENT_DATA does to the gate; only with `alarms`. A new alarm starts in
   * INSUFFICIENT_DATA and stays there until its first evaluation, and a count metric (5xx errors)
   * often has no data while healthy: with `closed` the gate holds until the alarm reports OK (a
   * rollout's wave waits, it is not halted), `cdk synth` warns and `sluice status` says so. Give
   * such an alarm `treatMissingData: TreatMissingData.NOT_BREACHING` (no warning then), or choose `open`.
   * @default 'closed'
   */
  readonly insufficientData?: 'open' | 'closed';
  /**
   * The longest a break-glass override (`sluice gate override`, allowed by `grantBreakGlass`) may
   * let a revision through this gate; a longer `--for` is refused. At most 24h.
   * @default Duration.hours(4)
   */
  readonly maxOverride?: Duration;
  /**
   * What the gate holds while closed. New revisions always (`revisions`); add `rollback` to hold a
   * rollback to a revision the delivery applied before (`sluice rollback`, allowed by
   * `grantRollback`) too: by default a closed gate lets such a rollback through, and it is
   * announced like a break-glass override. Must list `revisions`.
   * @default ['revisions']
   */
  readonly holds?: ('revisions' | 'rollback')[];
  /**
   * One-off spans the gate is closed for, whatever its requests say: an approved open request
   * does not lift a freeze (only a break-glass override lets a revision through one). At most 100.
   * @default - none
   */
  readonly freezes?: SluiceGateFreeze[];
  /**
   * RFC 5545 calendars (RRULE, EXDATE, TZID, all-day events): the gate is closed during each
   * event, whatever its requests say. A `file` is read at synth, relative to the current
   * directory (`Sluice.fromConfigFile`: to the config file). At most 4.
   * @default - none
   */
  readonly calendars?: SluiceGateCalendar[];
  /**
   * AWS Systems Manager Change Calendars (names, or ARNs for another account's shared ones): the
   * gate is closed while any of them is CLOSED, read with `ssm:GetCalendarState` at each
   * evaluation; one that cannot be read counts as CLOSED. At most 10.
   * @default - none
   */
  readonly changeCalendars?: string[];
  /**
   * A country's (or region's) holidays, as the date-holidays library computes them: the gate is
   * closed on each, from local midnight to the next local midnight in `timeZone`, whatever its
   * requests say. An unknown country, region or type fails synth, naming the gate and the field.
   * @default - none
   */
  readonly holidays?: SluiceGateHolidays;
}

/** The holidays of a country or one of its regions (date-holidays' codes). */
export interface SluiceGateHolidays {
  /** ISO 3166-1 alpha-2 country code in capitals, as date-holidays names it: `DE`, `US`. */
  readonly country: string;
  /**
   * A region (state) of the country, as date-holidays names it: `BY` (Bavaria), `CA`.
   * @default - the country's nationwide holidays only
   */
  readonly region?: string;
  /**
   * Which holiday types close the gate: `public`, `bank`, `school`, `optional`, `observance`.
   * @default ['public']
   */
  readonly types?: string[];
  /**
   * IANA time zone the holidays' days are read in.
   * @default - date-holidays' first time zone for the region, else for the country (DE: Europe/Berlin, US: America/New_York)
   */
  readonly timeZone?: string;
}

/** A one-off span a gate is closed for. */
export interface SluiceGateFreeze {
  /** Local date-time in `timeZone` the freeze starts: `2026-12-24` or `2026-12-24T18:00[:00]`, no offset. */
  readonly from: string;
  /** Local date-time in `timeZone` it ends (the gate is closed up to it); after `from`, at most a year later. */
  readonly to: string;
  /**
   * IANA time zone `from` and `to` are read in, e.g. `Europe/Berlin`.
   * @default 'UTC'
   */
  readonly timeZone?: string;
  /**
   * Why, shown with the held deliveries and in `sluice gates`.
   * @default - none
   */
  readonly reason?: string;
}

/**
 * An RFC 5545 calendar whose every event closes a gate for its span. Give `ics` or `file` (read at
 * synth), or `s3` or `url` (read live by the functions).
 */
export interface SluiceGateCalendar {
  /**
   * Names the calendar in messages.
   * @default - the file's base name, or 'calendar'
   */
  readonly name?: string;
  /**
   * The iCalendar text (`BEGIN:VCALENDAR` …), at most 100,000 characters.
   * @default - read from `file`
   */
  readonly ics?: string;
  /**
   * A `.ics` file read at synth.
   * @default - `ics` is given
   */
  readonly file?: string;
  /**
   * An S3 object the functions read at each evaluation (a conditional GET with its ETag; the
   * stack grants `s3:GetObject` on exactly this object). At most 1 MiB, parsed as `ics` is.
   * @default - not read from S3
   */
  readonly s3?: SluiceCalendarObject;
  /**
   * An `https://` URL the functions read at each evaluation, on a host `calendarHosts` lists; no
   * redirects, never to a private or loopback address.
   * @default - not read from a URL
   */
  readonly url?: string;
  /**
   * For `s3` and `url`: how old the last good copy may get (not confirmed by its source, because
   * it cannot be read or what it holds is refused) before the gate counts as closed. 1 minute to 7 days.
   * @default Duration.hours(24)
   */
  readonly maxStaleness?: Duration;
  /**
   * IANA time zone of its all-day events and floating times (a TZID names its own).
   * @default 'UTC'
   */
  readonly timeZone?: string;
}

/** An S3 object a live calendar is read from. */
export interface SluiceCalendarObject {
  readonly bucket: string;
  readonly key: string;
}

/** One wave of a rollout. */
export interface SluiceRolloutWave {
  /**
   * The deliveries of the wave: names in `SluiceProps.deliveries`, or patterns of them (`*` any
   * run of characters, `?` one). A delivery matched by an earlier wave stays in that wave, so
   * `['*']` in the last wave is every delivery not yet taken. Each pattern must match a delivery.
   */
  readonly deliveries: string[];
  /**
   * How long every delivery of the wave must have been Ready at the rollout's revision before the
   * next wave starts (more than 0, at most 30 days).
   * @default - Ready is enough
   */
  readonly soak?: Duration;
  /**
   * A gate (one of `SluiceProps.gates`) that holds the wave from starting while it is closed; with
   * `approval: 'revision'` an approval names the rollout's revision. A gate closed by its alarms
   * halts the rollout.
   * @default - none
   */
  readonly gate?: string;
}

/**
 * A release wave: one revision of one source taken by a fleet of deliveries, wave after wave,
 * each wave starting when the one before is Ready at that revision and has soaked. A failed
 * delivery, or an alarm gate closing, halts it (`sluice rollout status|resume|rollback`).
 */
export interface SluiceRollout {
  readonly name: string;
  /**
   * The repository and tag or semver range the rollout's revision is resolved from; its member
   * deliveries take that digest instead of resolving their own tag, and must pull from the same
   * repository (their own registry host may differ, as with ECR replication).
   */
  readonly source: SluiceSource;
  /** The waves, in order; a delivery is in at most one rollout. */
  readonly waves: SluiceRolloutWave[];
  /**
   * The most deliveries of a wave that take the revision at once (within each cluster's
   * `clusterConcurrency`), at most 1000.
   * @default - the whole wave
   */
  readonly maxParallel?: number;
  /**
   * What a newer revision does while a rollout is under way: `wait` starts it once the current
   * rollout has finished or been halted; `restart` starts it at once, from the first wave.
   * @default 'wait'
   */
  readonly supersede?: 'wait' | 'restart';
}

export interface SluiceProps {
  /**
   * The deliveries; removing one and deploying deletes its objects from the cluster (unless its
   * deletionPolicy is Orphan).
   * @default - none
   */
  readonly deliveries?: SluiceDelivery[];
  /** @default - none */
  readonly gates?: SluiceGate[];
  /**
   * Release waves: one revision taken by groups of `deliveries`, in order, with soaks, gates and
   * an automatic halt.
   * @default - none: each delivery resolves its own source
   */
  readonly rollouts?: SluiceRollout[];
  /**
   * Hosts a gate's calendar may be read from over HTTPS (`calendars[].url`), exactly as written
   * (lower case, no IP addresses). A calendar URL on any other host fails synth, and the
   * functions refuse it too.
   * @default - none: calendars are read from S3 or given inline only
   */
  readonly calendarHosts?: string[];
  /**
   * Where reconcile events (`Reconcile Succeeded|Failed|Blocked`) and gate events go.
   * @default - no events are published
   */
  readonly eventBus?: events.IEventBus;
  /**
   * Notified when an alarm changes state: a reconcile failed, a delivery held too long or stale,
   * a function's errors, throttles or near-timeout runs, a message in the failure queue.
   * @default - alarms without actions (a synth-time warning says so)
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * A CloudWatch dashboard of the deliveries (latest run, revision, time since the last success,
   * outcomes, run durations, objects applied and pruned) and gates (open or closed, requests,
   * pending approvals, releases waiting), with how to approve; the stack outputs its console URL.
   * Its log widgets query the reconcile function's log lines (CloudWatch Logs Insights, billed per
   * GB scanned when viewed); it adds no custom metrics.
   * @default true
   */
  readonly dashboard?: boolean;
  /**
   * Where the gates' Systems Manager runbooks send approval requests (aws:approve's
   * NotificationArn): approvers subscribe to it. The automation role is granted sns:Publish on it;
   * Systems Manager's documentation asks for a topic name beginning with `Automation`. With an
   * `eventBus`, the reconcile function's `Release Waiting` events (a release newly held at a gate)
   * are sent to it too, by one EventBridge rule per gate, as a message naming how to approve.
   * @default - the alarmTopic; with neither, approvers find pending approvals in the Systems Manager console
   */
  readonly approvalTopic?: sns.ITopic;
  /**
   * Shareable Lambda console test events of the gate function (status, open, close per gate),
   * kept in the EventBridge schema registry `lambda-testevent-schemas`. That registry exists
   * once anyone in the account and region saved a shareable test event: `existing` uses it,
   * `create` creates it (and keeps it when the stack is deleted), `none` makes no test events.
   * Test events are claims: recorded as unverified, refused by gates with `requireVerified`.
   * The default makes none: a stack that created the account-wide registry would fail to deploy
   * wherever it already exists (docs/approvals.md, "Console test events (claims)").
   * @default 'none'
   */
  readonly consoleTestEvents?: 'create' | 'existing' | 'none';
  /**
   * `perDelivery`: the reconcile function's metrics carry the delivery as a dimension, and each
   * delivery has its own failed, blocked-too-long and stale alarms: about $0.90 a delivery-month
   * in CloudWatch (3 alarms, 2 to 5 custom metrics). `fleet`: the metrics and the three alarms
   * are for all deliveries together (log lines and `sluice status` say which delivery), and a
   * single delivery's lost schedule is not alarmed. See docs/scale.md.
   * @default 'perDelivery'
   */
  readonly monitoring?: 'perDelivery' | 'fleet';
  /**
   * A delivery held (by closed gates, the mass-deletion brake or a dependency not ready) for longer than this raises an alarm.
   * Planned holds do not count: a gate closed only by its freezes, calendar events or Change
   * Calendars (the delivery's status names them) reports the delivery as held 0 seconds.
   * @default Duration.hours(24)
   */
  readonly blockedAlarmThreshold?: Duration;
  /**
   * The prefix of the names of the alarms the construct makes (`<prefix>-<delivery>-failed`,
   * `<prefix>-reconcile-errors`, ...), so that they keep their names across deploys and can be
   * found, silenced or routed by name. Alarm names are unique per account and Region.
   * @default - `exportPrefix`, else the stack's name
   */
  readonly alarmNamePrefix?: string;
  /**
   * Encrypts the table with this key.
   * @default - an AWS managed key
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * What happens to the table (gate audit trail, inventories) when it leaves the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection on the table: no one deletes it, not even CloudFormation, until
   * it is turned off.
   * @default true
   */
  readonly tableDeletionProtection?: boolean;
  /**
   * The name of the role that applies to and prunes from clusters (the reconcile and spec
   * functions' role). Name it when a trust policy or an access entry elsewhere must name the role
   * (a cross-account `roleArn`, a cluster in another stack). IAM names are account-wide: one name
   * per account.
   * @default - a name CloudFormation generates
   */
  readonly deployerRoleName?: string;
  /**
   * The Node.js runtime of the reconcile, gate and spec functions: `Runtime.NODEJS_22_X` or
   * `Runtime.NODEJS_20_X` (others are refused at synth).
   * @default Runtime.NODEJS_22_X
   */
  readonly runtime?: lambda.Runtime;
  /**
   * The prefix of the stack outputs' export names (`<prefix>-TableName`, `<prefix>-GateFunctionName`,
   * ...), which `sluice --stack <stack>` reads. Export names are unique per account and Region: set
   * one for each further Sluice in the same stack (then `sluice --stack <stack> --export-prefix <prefix>`).
   * @default - the stack's name
   */
  readonly exportPrefix?: string;
  /**
   * ECR push events of repositories in other accounts or regions reach this stack's default
   * event bus, because an EventBridge rule there forwards them (see docs/deploying.md). Without
   * it, sluice makes push rules only for repositories in the stack's own account and region, the
   * only ones whose events arrive on its bus; the others are picked up at each interval.
   * @default false
   */
  readonly forwardedPushEvents?: boolean;
  /**
   * Spread each delivery's interval runs over its interval (EventBridge Scheduler's flexible time
   * window), so that a thousand deliveries do not all reconcile in the same second.
   * @default true
   */
  readonly spreadIntervals?: boolean;
  /**
   * Memory of the reconcile function (artifacts are unpacked and built in memory).
   * @default 1024
   */
  readonly reconcileMemorySize?: number;
  /**
   * Reserved concurrency of the reconcile function: at most this many reconciles run at once, in
   * all, and the account's other functions can never take them. Invocations beyond it are
   * throttled (the throttles alarm fires); asynchronous ones are retried by Lambda for up to an
   * hour, then go to the failure queue. A positive integer, within the account's unreserved
   * concurrency.
   * @default - none reserved: the account's unreserved concurrency
   */
  readonly reconcileReservedConcurrency?: number;
  /**
   * Timeout of the reconcile function; every delivery's timeout must leave a minute of it.
   * @default Duration.minutes(15)
   */
  readonly reconcileTimeout?: Duration;
  /**
   * Runs the functions that reach clusters (reconcile, spec) in this VPC, for private cluster
   * endpoints. The VPC needs a route to the AWS APIs (NAT or endpoints: DynamoDB, ECR, S3, STS, EKS).
   * @default - not in a VPC
   */
  readonly vpc?: ec2.IVpc;
  /** @default - the VPC's private subnets */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** @default - a security group allowing all outbound traffic */
  readonly securityGroups?: ec2.ISecurityGroup[];
  /**
   * The access policies of the access entry created on clusters passed as `eks.ICluster`.
   * @default - AmazonEKSClusterAdminPolicy, cluster scope
   */
  readonly clusterAccessPolicies?: eks.IAccessPolicy[];
  /**
   * How long the functions' logs are kept.
   * @default logs.RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Encrypts every log group sluice creates (the reconcile, gate and spec functions' and the spec
   * provider's) with this KMS key. Its key policy must let CloudWatch Logs use it: sluice adds
   * that statement to a key made in the same app (`logs.<region>.amazonaws.com`, for this
   * account's log groups only); for an imported key, add it yourself.
   * @default - CloudWatch Logs' own encryption
   */
  readonly logEncryptionKey?: kms.IKey;
  /**
   * Accounts besides the stack's own whose principals may sign gate requests, overrides and
   * rollout actions (a grantee's role in another account signs as a principal of that account).
   * The gate function refuses a proof signed in any other account, whoever it names, and counts an
   * IAM Identity Center role (`AWSReservedSSO_*`) as a person only from these accounts.
   * @default - the stack's own account only
   */
  readonly trustedAccounts?: string[];
}

// The props mirror the config schema field for field: a field added to the schema fails here until added above.
type MissingFrom<Schema, Props> = Record<Exclude<keyof Schema, keyof Props>, never>;
const _deliveryFields: MissingFrom<DeliveryInput, SluiceDelivery> &
  MissingFrom<SluiceDelivery, DeliveryInput> = {};
const _gateFields: MissingFrom<GateInput, SluiceGate> & MissingFrom<SluiceGate, GateInput> = {};
const _rolloutFields: MissingFrom<RolloutInput, SluiceRollout> & MissingFrom<SluiceRollout, RolloutInput> =
  {};
type HolidaysInput = NonNullable<GateInput['holidays']>;
const _holidayFields: MissingFrom<HolidaysInput, SluiceGateHolidays> &
  MissingFrom<SluiceGateHolidays, HolidaysInput> = {};
type RolloutWaveInput = RolloutInput['waves'][number];
const _rolloutWaveFields: MissingFrom<RolloutWaveInput, SluiceRolloutWave> &
  MissingFrom<SluiceRolloutWave, RolloutWaveInput> = {};
const _sourceFields: MissingFrom<DeliveryInput['source'], SluiceSource> &
  MissingFrom<SluiceSource, DeliveryInput['source']> = {};
type HealthCheckExprInput = NonNullable<DeliveryInput['healthCheckExprs']>[number];
const _healthCheckExprFields: MissingFrom<HealthCheckExprInput, SluiceHealthCheckExpr> &
  MissingFrom<SluiceHealthCheckExpr, HealthCheckExprInput> = {};
