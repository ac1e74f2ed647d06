// The construct for alarm gates and soaks: rules on the named alarms' state changes invoking the
// reconcile function, DescribeAlarms on those alarms only, and a dependency's soak in the spec.
import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT,
  arnOf,
  functionId,
  logicalId,
  REGION,
  SEED_GATES,
  seedDelivery,
  statementsOf,
  synth,
  seedSynth,
} from './synth.ts';

const OTHER_ARN = `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:latency`;
/** A name: the alarm of that name in the stack's account and region. */
const NAMED_ARN = {
  'Fn::Join': [
    '',
    ['arn:', { Ref: 'AWS::Partition' }, `:cloudwatch:${REGION}:${ACCOUNT}:alarm:checkout-errors`],
  ],
};

const alarmRules = (template: ReturnType<typeof synth>['template']) =>
  Object.values(template.findResources('AWS::Events::Rule')).filter(
    (rule) => JSON.stringify(rule.Properties.EventPattern.source) === '["aws.cloudwatch"]',
  );
const describeAlarms = (statements: Record<string, unknown>[]) =>
  statements.filter((s) => s.Action === 'cloudwatch:DescribeAlarms');

describe('alarm gates', () => {
  const { template } = synth((cluster) => ({
    gates: [
      ...SEED_GATES,
      { name: 'healthy', default: 'open', alarms: ['checkout-errors', OTHER_ARN] },
      { name: 'also-healthy', default: 'open', alarms: ['checkout-errors'], insufficientData: 'open' },
    ],
    deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'healthy', blocks: 'revisions' }] }],
  }));
  const reconcile = functionId(template, 'reconcile');
  const gate = functionId(template, 'open and close gates');
  const roleOf = (fn: string) =>
    (template.toJSON().Resources[fn].Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;

  it("one rule on the alarms' state changes, by ARN (a name as this stack's alarm), invoking reconcile", () => {
    expect(alarmRules(template)).toHaveLength(1);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.cloudwatch'],
        'detail-type': ['CloudWatch Alarm State Change'],
        resources: [NAMED_ARN, OTHER_ARN],
      },
      Targets: [Match.objectLike({ Arn: arnOf(reconcile), DeadLetterConfig: Match.anyValue() })],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: arnOf(reconcile),
      Principal: 'events.amazonaws.com',
      SourceArn: arnOf(
        logicalId(
          template,
          'AWS::Events::Rule',
          (p) => JSON.stringify((p.EventPattern as { source: unknown }).source) === '["aws.cloudwatch"]',
        ),
      ),
    });
  });

  it('both functions may DescribeAlarms on those alarms, and on nothing else', () => {
    for (const fn of [reconcile, gate])
      expect(describeAlarms(statementsOf(template, roleOf(fn)))).toEqual([
        { Action: 'cloudwatch:DescribeAlarms', Effect: 'Allow', Resource: [NAMED_ARN, OTHER_ARN] },
      ]);
  });

  it('the gate spec keeps the alarms and insufficientData as written', () => {
    const id = logicalId(template, 'Custom::SluiceGate', (p) => p.Name === 'also-healthy');
    expect(JSON.parse(template.toJSON().Resources[id].Properties.Spec as string)).toEqual({
      name: 'also-healthy',
      default: 'open',
      alarms: ['checkout-errors'],
      insufficientData: 'open',
    });
  });

  it('without alarm gates: no alarm rule, no CloudWatch read', () => {
    const plain = seedSynth().template;
    expect(alarmRules(plain)).toEqual([]);
    const statements = Object.values(plain.findResources('AWS::IAM::Policy')).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement as Record<string, unknown>[],
    );
    expect(describeAlarms(statements)).toEqual([]);
  });
});

describe('soak', () => {
  it("a dependency's soak (a Duration) reaches the delivery spec as a duration", () => {
    const { template } = synth((cluster) => ({
      gates: SEED_GATES,
      deliveries: [
        { ...seedDelivery(cluster), name: 'staging' },
        {
          ...seedDelivery(cluster),
          dependsOn: [{ name: 'staging', soak: Duration.minutes(30) }, 'staging-two'],
        },
        { ...seedDelivery(cluster), name: 'staging-two' },
      ],
    }));
    const id = logicalId(template, 'Custom::SluiceDelivery', (p) => p.Name === 'oddy-test');
    const spec = JSON.parse(template.toJSON().Resources[id].Properties.Spec as string) as Record<
      string,
      unknown
    >;
    expect(spec.dependsOn).toEqual([{ name: 'staging', soak: '1800s' }, 'staging-two']);
  });
});
