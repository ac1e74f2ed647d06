// The staleness alarm and the interval schedule's spread for any interval CloudWatch can watch,
// and a synth error naming the delivery for one it cannot (bundling skipped: templates only).
import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import type { SluiceDelivery } from '../../lib/index.ts';
import { ECR_URL, synth, withoutCloudFormationChecks } from './synth.ts';

withoutCloudFormationChecks();

const NAMED = { eks: { name: 'staging', region: 'eu-west-1' } };
const delivery = (fields: Partial<SluiceDelivery>): SluiceDelivery => ({
  name: 'app',
  source: { url: ECR_URL },
  cluster: NAMED,
  ...fields,
});

interface AlarmProps {
  Period: number;
  EvaluationPeriods: number;
  TreatMissingData: string;
}

function staleAlarmOf(interval: Duration): AlarmProps {
  const { template } = synth(() => ({ deliveries: [delivery({ interval })] }));
  const alarms = Object.values(
    template.findResources('AWS::CloudWatch::Alarm', {
      Properties: { MetricName: 'ReconcileCompleted' },
    }),
  );
  expect(alarms).toHaveLength(1);
  return alarms[0]!.Properties as AlarmProps;
}

/** What PutMetricAlarm takes: a period of 10, 20, 30 s or whole minutes; at most 7 days of them, a day when shorter than an hour. */
function cloudWatchTakes({ Period, EvaluationPeriods }: AlarmProps): boolean {
  const range = Period * EvaluationPeriods;
  return (
    ([10, 20, 30].includes(Period) || Period % 60 === 0) &&
    range <= 7 * 86_400 &&
    (Period >= 3_600 || range <= 86_400)
  );
}

describe('the staleness alarm watches three intervals, or as much of them as CloudWatch allows', () => {
  it.for([
    { label: '5m', interval: Duration.minutes(5), period: 300, periods: 3, spread: 5 },
    { label: '24h', interval: Duration.hours(24), period: 86_400, periods: 3, spread: 1_440 },
    { label: '2d', interval: Duration.days(2), period: 172_800, periods: 3, spread: 1_440 },
    // 3 × 3d is past CloudWatch's 7 days: the window is 7 days, still more than two intervals.
    { label: '3d', interval: Duration.days(3), period: 201_600, periods: 3, spread: 1_440 },
    { label: '3d12h', interval: Duration.hours(84), period: 201_600, periods: 3, spread: 1_440 },
  ])(
    'every $label: $period s × $periods periods, missing data breaching; the schedule spreads over $spread minutes',
    ({ interval, period, periods, spread }) => {
      const alarm = staleAlarmOf(interval);
      expect(alarm).toMatchObject({
        Period: period,
        EvaluationPeriods: periods,
        TreatMissingData: 'breaching',
      });
      expect(cloudWatchTakes(alarm)).toBe(true);
      // Two runs (at most an interval and the spread apart) always fall in the window: it never
      // fires between runs on schedule.
      expect(period * periods).toBeGreaterThan(interval.toSeconds() + spread * 60);
      const { template } = synth(() => ({ deliveries: [delivery({ interval })] }));
      template.hasResourceProperties('AWS::Scheduler::Schedule', {
        Target: Match.objectLike({ Input: Match.stringLikeRegexp('"delivery"') }),
        FlexibleTimeWindow:
          spread > 0 ? { Mode: 'FLEXIBLE', MaximumWindowInMinutes: spread } : { Mode: 'OFF' },
      });
    },
  );

  it('an interval no alarm can watch (two of them past 7 days) fails synth, naming the delivery and the field', () => {
    expect(() =>
      synth(() => ({ deliveries: [delivery({ name: 'weekly', interval: Duration.days(4) })] })),
    ).toThrow(
      /Sluice props: deliveries\[weekly\]\.interval: 4d is too long for the delivery's staleness alarm: it must watch at least 2 intervals \(8d\).*at most 7d\. Use an interval of at most 3d12h, or suspend the delivery/,
    );
  });

  it('a suspended delivery of such an interval has no staleness alarm, and synthesizes', () => {
    const { template } = synth(() => ({
      deliveries: [delivery({ name: 'weekly', interval: Duration.days(7), suspend: true })],
    }));
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { MetricName: 'ReconcileCompleted' }, 0);
  });

  it("with monitoring: 'fleet' only the shortest interval is watched: a weekly delivery beside a 5-minute one synthesizes", () => {
    const { template } = synth(() => ({
      monitoring: 'fleet',
      deliveries: [delivery({ name: 'weekly', interval: Duration.days(7) }), delivery({ name: 'often' })],
    }));
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ReconcileCompleted',
      Period: 300,
      EvaluationPeriods: 3,
    });
    // Spread over the interval, within Scheduler's 1440 minutes.
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(7 days)',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 1_440 },
    });
  });
});
