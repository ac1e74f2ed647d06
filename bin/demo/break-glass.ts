// The demo's alarm gate and break-glass: a CloudWatch alarm (on the local stand-in) closes
// 'checkout-healthy' while it is in ALARM; an on-call engineer given grantBreakGlass lets one
// hotfix through every gate of the delivery, proving who they are with a presigned STS
// GetCallerIdentity bound to the override (as `sluice gate override --function` does).
import { CloudWatchClient, PutMetricAlarmCommand, SetAlarmStateCommand } from '@aws-sdk/client-cloudwatch';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import { stsCallerIdentity } from '../../functions/core/aws/sts-caller-identity.ts';
import { systemClock } from '../../functions/core/clock.ts';
import { tableFromEnvironment } from '../../functions/core/environment.ts';
import {
  overrideRequestDigest,
  type OverrideFields,
} from '../../functions/core/break-glass/override-event.ts';
import { handleProvenOverride } from '../../functions/core/break-glass/override-request.ts';
import { proveRequest } from '../commands/signed-gate-request.ts';
import { BREAK_GLASS_ALIAS } from '../../functions/core/gates/override.ts';
import { demoSigners } from './grants.ts';
import { check, say } from './narrate.ts';

const FUNCTION = 'arn:aws:lambda:eu-west-1:123456789012:function:sluice-gate';
/** The alarm the demo's 'checkout-healthy' gate names. */
export const CHECKOUT_ALARM = 'checkout-5xx';

/** Creates the checkout error-rate alarm on the CloudWatch stand-in, in OK (AWS_ENDPOINT_URL_CLOUDWATCH). */
export async function createCheckoutAlarm(): Promise<void> {
  await new CloudWatchClient({}).send(
    new PutMetricAlarmCommand({
      AlarmName: CHECKOUT_ALARM,
      Namespace: 'Checkout',
      MetricName: '5xxRate',
      Statistic: 'Average',
      Period: 60,
      EvaluationPeriods: 3,
      Threshold: 2,
      ComparisonOperator: 'GreaterThanThreshold',
    }),
  );
  await setCheckoutAlarm('OK', 'Threshold Crossed: 5xx rate 0.1% (≤ 2%)');
}

/** Moves the checkout alarm, as CloudWatch does when its metric crosses the threshold. */
export async function setCheckoutAlarm(state: 'OK' | 'ALARM', reason: string): Promise<void> {
  await new CloudWatchClient({}).send(
    new SetAlarmStateCommand({ AlarmName: CHECKOUT_ALARM, StateValue: state, StateReason: reason }),
  );
}

/** Alice, on call and granted break-glass, lets `revision` through every gate of `delivery` for an hour. */
export async function breakGlass(stsEndpoint: string, delivery: string, revision: string): Promise<void> {
  const deps = {
    db: tableFromEnvironment(),
    clock: systemClock,
    sts: stsCallerIdentity(stsEndpoint),
    signers: demoSigners([BREAK_GLASS_ALIAS]),
  };
  const fields: OverrideFields = {
    action: 'override',
    allGates: true,
    deliveries: [delivery],
    revision,
    window: '1h',
    reason: 'INC-77 hotfix: checkout 5xx',
  };
  const alice = TEST_IDENTITIES.alice;
  const proof = await proveRequest(overrideRequestDigest(fields), FUNCTION, 'eu-west-1', alice);
  // What the gate function does with a signed override sent to its break_glass entry.
  const made = await handleProvenOverride({ ...fields, proof }, 'invoke', `${FUNCTION}:break_glass`, deps);
  say(made.message);
  check(
    made.overrides.length > 0 && made.overrides.every((override) => override.madeBy === alice.arn),
    `alice (STS verifies ${alice.arn}) overrides ${made.overrides.map((o) => o.gate).join(', ')} for that revision only, until ${made.overrides[0]?.endsAt}`,
    made.message,
  );
}
