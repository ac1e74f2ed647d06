// Rollout member patterns (`*`, `?`) match delivery names without a backtracking RegExp.
import { describe, expect, it } from 'vitest';
import { matchesPattern } from '../../../functions/core/config/index.ts';

describe('matchesPattern', () => {
  it('matches * as any run and ? as one character, the whole name', () => {
    expect(matchesPattern('canary-*', 'canary-eu-1')).toBe(true);
    expect(matchesPattern('canary-*', 'canary-')).toBe(true);
    expect(matchesPattern('canary-*', 'xcanary-eu')).toBe(false);
    expect(matchesPattern('eu-??', 'eu-01')).toBe(true);
    expect(matchesPattern('eu-??', 'eu-1')).toBe(false);
    expect(matchesPattern('*-1', 'eu-1-1')).toBe(true);
    expect(matchesPattern('*', '')).toBe(true);
    expect(matchesPattern('a*b*c', 'abxbc')).toBe(true);
    expect(matchesPattern('a*b*c', 'abxbcx')).toBe(false);
  });

  it('a pattern of many stars against a 63-character name it does not match: within a second', () => {
    const started = process.cpuUsage();
    expect(matchesPattern(`${'*a'.repeat(20)}*b`, 'a'.repeat(63))).toBe(false);
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(1000);
  });
});
