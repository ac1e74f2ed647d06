// Alarm gates in a real app: alarms given as tokens or constructs, alarms of other accounts or
// regions refused, the gate (and the deliveries using it) written after the alarms and Change
// Calendars of the app it waits on, the synth warning for alarms that may have no data, and the
// stable names and planned-hold metric of the alarms the construct makes.
import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { WARNINGS } from '../../lib/warnings.ts';
import { ACCOUNT, logicalId, REGION, SEED_GATES, seedDelivery, synth, seedSynth } from './synth.ts';

const metric = new cloudwatch.Metric({ namespace: 'Shop', metricName: '5xx', period: Duration.minutes(1) });
const errorsAlarm = (scope: Construct, alarmName?: string, treatMissingData?: cloudwatch.TreatMissingData) =>
  new cloudwatch.Alarm(scope, `Errors${alarmName ?? ''}`, {
    metric,
    threshold: 5,
    evaluationPeriods: 1,
    ...(alarmName && { alarmName }),
    ...(treatMissingData && { treatMissingData }),
  });

type Template = ReturnType<typeof synth>['template'];
const gateSpec = (template: Template, name: string) => {
  const id = logicalId(template, 'Custom::SluiceGate', (p) => p.Name === name);
  return {
    id,
    resource: template.toJSON().Resources[id] as Record<string, unknown> & { DependsOn?: string[] },
  };
};
const alarmId = (template: Template, name: string) =>
  logicalId(
    template,
    'AWS::CloudWatch::Alarm',
    (p) => p.MetricName === '5xx' && (name === '' || p.AlarmName === name),
  );

describe('alarm gates wired to the alarms of the app', () => {
  it('takes alarm.alarmName (a token, though the name was set) and writes the gate after the alarm', () => {
    const { template } = synth((cluster, stack) => ({
      gates: [
        ...SEED_GATES,
        { name: 'healthy', default: 'open', alarms: [errorsAlarm(stack, 'shop-5xx').alarmName] },
      ],
      deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'healthy', blocks: 'all' }] }],
    }));
    const alarm = alarmId(template, 'shop-5xx');
    const { resource } = gateSpec(template, 'healthy');
    // The spec carries the name as CloudFormation resolves it.
    expect(JSON.stringify((resource.Properties as { Spec: unknown }).Spec)).toContain(`"Ref":"${alarm}"`);
    // A reference orders the gate after the alarm; the delivery comes after the gate.
    const delivery = logicalId(template, 'Custom::SluiceDelivery', (p) => p.Name === 'oddy-test');
    expect(template.toJSON().Resources[delivery].DependsOn).toContain(gateSpec(template, 'healthy').id);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'cloudwatch:DescribeAlarms',
            Resource: {
              'Fn::Join': ['', Match.arrayWith([{ Ref: alarm }])],
            },
          }),
        ]),
      },
    });
  });

  it('takes an IAlarm: an alarm of the app as its ARN, the gate written after it', () => {
    const { template } = synth((cluster, stack) => ({
      gates: [...SEED_GATES, { name: 'healthy', default: 'open', alarms: [errorsAlarm(stack)] }],
      deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'healthy', blocks: 'all' }] }],
    }));
    const alarm = alarmId(template, '');
    const { resource } = gateSpec(template, 'healthy');
    expect(JSON.stringify((resource.Properties as { Spec: unknown }).Spec)).toContain(
      `"Fn::GetAtt":["${alarm}","Arn"]`,
    );
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.cloudwatch'], resources: [{ 'Fn::GetAtt': [alarm, 'Arn'] }] },
    });
  });

  it('writes the gate after an alarm and a Change Calendar of the app that it names literally', () => {
    const { template } = synth((cluster, stack) => {
      errorsAlarm(stack, 'checkout-errors');
      const holidays = new ssm.CfnDocument(stack, 'Holidays', {
        name: 'shop-holidays',
        documentType: 'ChangeCalendar',
        documentFormat: 'TEXT',
        content: {},
      });
      // A Change Calendar's content is iCalendar text, which the L1's type (an object) does not allow.
      holidays.addPropertyOverride('Content', 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n');
      return {
        gates: [
          ...SEED_GATES,
          {
            name: 'healthy',
            default: 'open',
            alarms: ['checkout-errors'],
            changeCalendars: ['shop-holidays'],
          },
        ],
        deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'healthy', blocks: 'all' }] }],
      };
    });
    const { resource } = gateSpec(template, 'healthy');
    expect(resource.DependsOn).toEqual(
      expect.arrayContaining([
        alarmId(template, 'checkout-errors'),
        logicalId(template, 'AWS::SSM::Document'),
      ]),
    );
  });

  it.each([
    ['another region', `arn:aws:cloudwatch:eu-west-1:${ACCOUNT}:alarm:latency`, 'region eu-west-1'],
    ['another account', `arn:aws:cloudwatch:${REGION}:210987654321:alarm:latency`, 'account 210987654321'],
  ])('refuses an alarm ARN of %s at synth, naming it', (_, arn, where) => {
    expect(() =>
      synth((cluster) => ({
        gates: [...SEED_GATES, { name: 'healthy', default: 'open', alarms: [arn] }],
        deliveries: [seedDelivery(cluster)],
      })),
    ).toThrow(
      new RegExp(`gates\\[healthy\\]\\.alarms\\[0\\]: alarm "${arn}" is in ${where}, not this stack's`),
    );
  });

  it('refuses an imported IAlarm of another region', () => {
    expect(() =>
      synth((cluster, stack) => ({
        gates: [
          ...SEED_GATES,
          {
            name: 'healthy',
            default: 'open',
            alarms: [
              cloudwatch.Alarm.fromAlarmArn(
                stack,
                'Far',
                `arn:aws:cloudwatch:eu-west-1:${ACCOUNT}:alarm:far`,
              ),
            ],
          },
        ],
        deliveries: [seedDelivery(cluster)],
      })),
    ).toThrow(/gates\[healthy\]\.alarms\[0\]: alarm .*:alarm:far" is in region eu-west-1/);
  });
});

describe('an alarm gate whose alarm may have no data', () => {
  const warningsOf = ({ app, stack }: ReturnType<typeof synth>) =>
    app
      .synth()
      .getStackArtifact(stack.artifactId)
      .messages.filter((m) => m.level === 'warning' && String(m.entry.data).includes('INSUFFICIENT_DATA'));

  it('warns at synth, naming the gate and what to do', () => {
    const synthesized = synth((cluster) => ({
      gates: [...SEED_GATES, { name: 'healthy', default: 'open', alarms: ['checkout-errors'] }],
      deliveries: [seedDelivery(cluster)],
    }));
    const [warning] = warningsOf(synthesized);
    expect(warning?.entry.data).toContain('gates healthy stay closed');
    expect(warning?.entry.data).toContain("insufficientData: 'open'");
    expect(warning?.entry.data).toContain(`[ack: ${WARNINGS.alarmGateWaitsForData}]`);
  });

  it('does not warn for insufficientData: open, nor for an alarm of the app treating missing data as not breaching', () => {
    const open = synth((cluster) => ({
      gates: [...SEED_GATES, { name: 'healthy', default: 'open', alarms: ['x'], insufficientData: 'open' }],
      deliveries: [seedDelivery(cluster)],
    }));
    expect(warningsOf(open)).toEqual([]);
    const notBreaching = synth((cluster, stack) => ({
      gates: [
        ...SEED_GATES,
        {
          name: 'healthy',
          default: 'open',
          alarms: [errorsAlarm(stack, 'quiet', cloudwatch.TreatMissingData.NOT_BREACHING), 'quiet'],
        },
      ],
      deliveries: [seedDelivery(cluster)],
    }));
    expect(warningsOf(notBreaching)).toEqual([]);
  });
});

describe("the construct's own alarms", () => {
  const names = (template: Template) =>
    Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (alarm) => (alarm as { Properties: { AlarmName?: string } }).Properties.AlarmName,
    );

  it('have stable names: the export prefix (the stack name) by default, alarmNamePrefix when given', () => {
    const plain = seedSynth().template;
    expect(names(plain)).toEqual(
      expect.arrayContaining([
        'Test-oddy-test-failed',
        'Test-oddy-test-blocked',
        'Test-oddy-test-stale',
        'Test-reconcile-errors',
        'Test-failures',
      ]),
    );
    expect(names(plain)).not.toContain(undefined);
    const named = synth(
      (cluster) => ({ gates: SEED_GATES, deliveries: [seedDelivery(cluster)], alarmNamePrefix: 'shop' }),
      { then: (sluice) => sluice.grantBreakGlass(new iam.AccountRootPrincipal()) },
    ).template;
    expect(names(named)).toEqual(
      expect.arrayContaining(['shop-oddy-test-kept', 'shop-gate-throttles', 'shop-break-glass']),
    );
    expect(new Set(names(named)).size).toBe(names(named).length);
  });

  it('the blocked-too-long alarm watches UnplannedBlockedSeconds: planned freezes and calendars do not page', () => {
    seedSynth().template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Test-oddy-test-blocked',
      MetricName: 'UnplannedBlockedSeconds',
    });
  });
});
