import { Annotations } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { Delivery, Gate } from '../functions/core/config/index.ts';
import { skippedScheduleWarnings } from '../functions/core/config/skipped-schedules.ts';
import type { EcrRepository } from './sources.ts';

export interface RiskyChoices {
  readonly deliveries: readonly Delivery[];
  /** Gates with `preventSelfApproval`: they need CloudTrail's PutImage records. */
  readonly selfApprovalGates: readonly Gate[];
  /** True when `clusterAccessPolicies` narrows the access entries from cluster admin. */
  readonly narrowedAccessPolicies: boolean;
  /**
   * The deliveries whose cluster sluice creates the access entry for (an `eks.ICluster`): the
   * others' access (a named cluster, a `roleArn`) is granted outside sluice, so it cannot tell.
   */
  readonly accessEntryDeliveries: ReadonlySet<string>;
  readonly alarmTopic: boolean;
  /** ECR repositories without a push rule: their events do not reach this stack's bus. */
  readonly unwatchedRepositories: readonly EcrRepository[];
  /** The stack's account or region is known only at deploy time. */
  readonly environmentAgnostic: boolean;
  /**
   * Alarm gates with `insufficientData: closed` naming an alarm not known to report OK without
   * data (one of the app treating missing data as not breaching).
   * @default - none
   */
  readonly gatesWaitingForData?: readonly string[];
  /**
   * `verify.kmsKeyArn` keys of another Region or account than the stack's: only their key policy
   * can let this stack's reconcile role call kms:GetPublicKey on them.
   * @default - none
   */
  readonly foreignSignatureKeys?: readonly string[];
}

/** The ids of sluice's synth-time warnings, to acknowledge one with `Annotations.of(scope).acknowledgeWarning(id)`. */
export const WARNINGS = {
  unsignedAdmin: 'sluice:unsigned-cluster-admin',
  deleteWithoutGate: 'sluice:delete-without-gate',
  noAlarmTopic: 'sluice:no-alarm-topic',
  unwatchedRepository: 'sluice:push-events-elsewhere',
  environmentAgnostic: 'sluice:environment-agnostic-push-rules',
  selfApprovalNeedsTrail: 'sluice:self-approval-needs-trail',
  alarmGateWaitsForData: 'sluice:alarm-gate-waits-for-data',
  scheduleInSkippedHour: 'sluice:schedule-in-skipped-hour',
  signatureKeyElsewhere: 'sluice:signature-key-elsewhere',
} as const;

/**
 * A warning on the gate's construct for each schedule naming a local time that clocks skip
 * (within two years of `now`): Scheduler does not fire it then. The schedule stays valid.
 */
export function warnOfSkippedScheduleTimes(scope: Construct, gate: Gate, now: Date): void {
  for (const message of skippedScheduleWarnings(gate, now))
    Annotations.of(scope).addWarningV2(WARNINGS.scheduleInSkippedHour, message);
}

/**
 * Warnings at synth (as cdk-nag reports findings) for choices that are allowed but risky: each
 * says what could happen and how to change it, and can be acknowledged by its id.
 */
export function warnOfRiskyChoices(scope: Construct, choices: RiskyChoices): void {
  const annotations = Annotations.of(scope);
  const clusterAdmin = choices.deliveries.filter(
    (d) =>
      choices.accessEntryDeliveries.has(d.name) &&
      !d.source.verify &&
      !d.impersonate &&
      !choices.narrowedAccessPolicies,
  );
  if (clusterAdmin.length > 0)
    annotations.addWarningV2(
      WARNINGS.unsignedAdmin,
      `deliveries ${names(clusterAdmin)} are applied with cluster-admin access (the default access policy) from sources without verify: whoever can push to their repositories is cluster admin. Set source.verify (cosign keys), impersonate a narrower identity, or narrow clusterAccessPolicies.`,
    );
  const ungated = choices.deliveries.filter((d) => d.deletionPolicy === 'Delete' && d.gates.length === 0);
  if (ungated.length > 0)
    annotations.addWarningV2(
      WARNINGS.deleteWithoutGate,
      `deliveries ${names(ungated)} have deletionPolicy Delete and no gate: removing one from the app (or a failed rename) deletes its objects from the cluster at the next deploy with nothing to hold it. Add a gate, or deletionPolicy: 'Orphan'.`,
    );
  if (!choices.alarmTopic)
    annotations.addWarningV2(
      WARNINGS.noAlarmTopic,
      'no alarmTopic: failed, stale and blocked deliveries, function errors and the failure queue raise alarms that notify no one. Pass an SNS topic as alarmTopic.',
    );
  if (choices.unwatchedRepositories.length > 0)
    annotations.addWarningV2(
      WARNINGS.unwatchedRepository,
      `ECR repositories ${choices.unwatchedRepositories.map((r) => `${r.repositoryName} (${r.account}, ${r.region})`).join(', ')} are in another account or region: their push events do not reach this stack's event bus, so their deliveries pick up pushes at each interval. Forward the events to this account's default bus and set forwardedPushEvents: true (docs/deploying.md).`,
    );
  if (choices.environmentAgnostic && choices.deliveries.some((d) => d.source.provider === 'aws'))
    annotations.addWarningV2(
      WARNINGS.environmentAgnostic,
      'the stack has no account or region: sluice cannot tell which ECR repositories send their push events to its bus, so it makes a rule for each, and those of other accounts or regions never match. Give the stack an env.',
    );
  if (choices.selfApprovalGates.length > 0)
    annotations.addWarningV2(
      WARNINGS.selfApprovalNeedsTrail,
      `gates ${choices.selfApprovalGates.map((g) => g.name).join(', ')} have preventSelfApproval: who pushed each digest comes from CloudTrail's ECR PutImage records, which reach EventBridge only when a CloudTrail trail logs management events in this account and region (where the repositories must be). Without one, no push is recorded and these gates refuse every approval. Create a trail (aws cloudtrail create-trail, or a CDK Trail), then acknowledge this warning.`,
    );
  const waiting = choices.gatesWaitingForData ?? [];
  if (waiting.length > 0)
    annotations.addWarningV2(
      WARNINGS.alarmGateWaitsForData,
      `gates ${waiting.join(', ')} stay closed while an alarm they name is in INSUFFICIENT_DATA (insufficientData: closed), and a new alarm starts there: the first deploy's deliveries (and a rollout's waves) wait until each alarm reports OK, and an alarm on a metric with no data while healthy (a 5xx count) never does. Give such alarms treatMissingData: TreatMissingData.NOT_BREACHING, or set the gate's insufficientData: 'open'; sluice status says which alarm has no data.`,
    );
  const foreign = choices.foreignSignatureKeys ?? [];
  if (foreign.length > 0)
    annotations.addWarningV2(
      WARNINGS.signatureKeyElsewhere,
      `the KMS keys ${foreign.join(', ')} that source.verify.kmsKeyArn names are in another account or Region than this stack: the reconcile role is granted kms:GetPublicKey on them, but the call succeeds only if each key's policy allows this account (a key of another account), so until it does every artifact verified against it is refused (the status names the key). Allow kms:GetPublicKey to the reconcile role in the key policy, then acknowledge this warning.`,
    );
}

const names = (deliveries: readonly Delivery[]) => deliveries.map((d) => d.name).join(', ');
