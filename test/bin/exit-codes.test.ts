// What `--exit-code` makes `sluice status` and `sluice rollout status` exit with (pure).
import { describe, expect, it } from 'vitest';
import { deliveriesExitCode, deliveryExitCode, rolloutExitCode } from '../../bin/commands/exit-codes.ts';

describe('status exit codes', () => {
  it('a delivery: Ready 0; held, under way or never reconciled 4; failed 1', () => {
    expect(deliveryExitCode({ ready: true, reason: 'ReconciliationSucceeded' })).toBe(0);
    for (const reason of [
      'GateClosed',
      'DependencyNotReady',
      'RolloutWaiting',
      'RolloutHalted',
      'Progressing',
    ] as const)
      expect(deliveryExitCode({ ready: false, reason })).toBe(4);
    expect(deliveryExitCode(undefined)).toBe(4);
    for (const reason of ['ArtifactFailed', 'ApplyFailed', 'HealthCheckFailed', 'OwnershipConflict'] as const)
      expect(deliveryExitCode({ ready: false, reason })).toBe(1);
  });

  it('several: a failure before a hold before Ready', () => {
    const ready = { ready: true, reason: 'ReconciliationSucceeded' } as const;
    const held = { ready: false, reason: 'GateClosed' } as const;
    const failed = { ready: false, reason: 'ApplyFailed' } as const;
    expect(deliveriesExitCode([])).toBe(0);
    expect(deliveriesExitCode([ready, ready])).toBe(0);
    expect(deliveriesExitCode([ready, held])).toBe(4);
    expect(deliveriesExitCode([held, failed, ready])).toBe(1);
  });

  it('a rollout: complete or idle 0, progressing 4, halted 1', () => {
    expect(rolloutExitCode('Complete')).toBe(0);
    expect(rolloutExitCode('Idle')).toBe(0);
    expect(rolloutExitCode('Progressing')).toBe(4);
    expect(rolloutExitCode('Halted')).toBe(1);
  });
});
