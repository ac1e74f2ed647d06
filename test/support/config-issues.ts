import { expect } from 'vitest';
import { ConfigError, type ConfigIssue } from '../../functions/core/config/index.ts';

/** The issues of the ConfigError `fn` throws; fails the test when it throws nothing or something else. */
export function issuesOf(fn: () => unknown): ConfigIssue[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}
