import { describe, expect, it } from 'vitest';
import { retryTime } from '../../../functions/core/reconcile/retry.ts';

const failedAt = new Date('2026-03-26T10:00:30Z');

describe('retryTime', () => {
  it('is retryInterval after the failure when that comes before the next interval run', () => {
    expect(retryTime({ intervalMs: 600_000, retryIntervalMs: 120_000 }, failedAt)).toEqual(
      new Date('2026-03-26T10:02:30Z'),
    );
  });

  it('is none without a retryInterval, or when the interval run comes first or at the same time', () => {
    expect(retryTime({ intervalMs: 600_000 }, failedAt)).toBeUndefined();
    expect(retryTime({ intervalMs: 600_000, retryIntervalMs: 600_000 }, failedAt)).toBeUndefined();
    expect(retryTime({ intervalMs: 300_000, retryIntervalMs: 900_000 }, failedAt)).toBeUndefined();
  });
});
