// The cost model of docs/scale.md: per-run counts times list prices, monitoring shared out.
import { describe, expect, it } from 'vitest';
import { costPerDeliveryMonth, PRICES, runsPerMonth, total } from '../../bench/scale/cost.ts';

const run = { lambdaSeconds: 0.25, memoryGb: 1, readUnits: 9, writeUnits: 5, busEvents: 0, logBytes: 1024 };
const line = (lines: { item: string; usd: number }[], item: string) =>
  lines.find((l) => l.item === item)!.usd;

describe('cost model', () => {
  it('a 5-minute interval is 8,760 runs a month (730 hours)', () => {
    expect(runsPerMonth(5)).toBe(8760);
  });

  it('multiplies the per-run counts by the list prices', () => {
    const lines = costPerDeliveryMonth(run, { deliveries: 1000, intervalMinutes: 5, monitoring: 'fleet' });
    expect(line(lines, 'Lambda duration')).toBeCloseTo(8760 * 0.25 * PRICES.lambdaGbSecond.usd, 10);
    expect(line(lines, 'DynamoDB writes')).toBeCloseTo(8760 * 5 * 0.625e-6, 10);
    expect(line(lines, 'DynamoDB reads')).toBeCloseTo(8760 * 9 * 0.125e-6, 10);
    expect(line(lines, 'Scheduler invocations')).toBeCloseTo(8760e-6, 10);
    expect(line(lines, 'EventBridge events')).toBe(0);
  });

  it('per-delivery monitoring costs each delivery 3 alarms and 2 metrics; fleet monitoring shares 13 alarms and 2 metrics', () => {
    const options = { deliveries: 100, intervalMinutes: 5 } as const;
    const perDelivery = costPerDeliveryMonth(run, { ...options, monitoring: 'perDelivery' });
    const fleet = costPerDeliveryMonth(run, { ...options, monitoring: 'fleet' });
    expect(line(perDelivery, 'CloudWatch alarms')).toBeCloseTo(0.3 + 1.0 / 100, 10);
    expect(line(perDelivery, 'CloudWatch custom metrics')).toBeCloseTo(0.6, 10);
    expect(line(fleet, 'CloudWatch alarms')).toBeCloseTo(1.3 / 100, 10);
    expect(line(fleet, 'CloudWatch custom metrics')).toBeCloseTo(0.6 / 100, 10);
    expect(total(perDelivery) - total(fleet)).toBeCloseTo(0.3 + 0.01 + 0.6 - 0.013 - 0.006, 10);
  });
});
