import { describe, expect, it } from 'vitest';
import { reconcile } from '../../../functions/core/reconcile/reconcile.ts';
import { retryTime, type RetryTimer } from '../../../functions/core/reconcile/retry.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery } from '../../support/deliveries.ts';
import { manualClock } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

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

describe('retries of a delivery that keeps failing', () => {
  it('one chain: a run failing before the pending retry keeps it, the retry run sets the next one', async () => {
    const bed = testbed();
    const repository = uniqueName('retry/chain');
    const name = uniqueName('chain');
    await pushFiles(bed, repository, 'main', { 'cm.yaml': 'kind: [unclosed\n' });
    const clock = manualClock('2026-03-26T10:00:00Z');
    const scheduled: string[] = [];
    const retryTimer: RetryTimer = {
      retryAt: async (delivery, at) => {
        scheduled.push(`${delivery} ${at.toISOString()}`);
        return at;
      },
    };
    const deps = { ...engineDeps(), clock, retryTimer };
    await registerDelivery(deps, bed, { name, repository, interval: '10m', retryInterval: '2m' });

    expect(await reconcile(name, deps)).toMatchObject({
      outcome: 'Failed',
      nextRetryAt: '2026-03-26T10:02:00.000Z',
    });
    clock.set('2026-03-26T10:01:00Z'); // a push between: fails too, the retry stays as it was
    expect(await reconcile(name, deps)).toMatchObject({
      outcome: 'Failed',
      nextRetryAt: '2026-03-26T10:02:00.000Z',
    });
    clock.set('2026-03-26T10:02:05Z'); // the retry itself, still failing: the next one
    expect(await reconcile(name, deps)).toMatchObject({
      outcome: 'Failed',
      nextRetryAt: '2026-03-26T10:04:05.000Z',
    });
    expect(scheduled).toEqual([`${name} 2026-03-26T10:02:00.000Z`, `${name} 2026-03-26T10:04:05.000Z`]);
    expect((await getStatus(deps.db, name))?.nextRetryAt).toBe('2026-03-26T10:04:05.000Z');
  });
});
