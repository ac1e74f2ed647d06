// CEL's matches() as cel-go runs it: Go's regexp (bounded, go-regexp.ts), also for a pattern that
// comes from the object rather than the expression.
import { describe, expect, it } from 'vitest';
import { compileCondition } from '../../../functions/core/cel/compile.ts';
import { CelEvaluationError } from '../../../functions/core/cel/condition.ts';

const cpuMs = (run: () => void) => {
  const started = process.cpuUsage();
  run();
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 1000;
};

describe('matches()', () => {
  it('a pattern of nested quantifiers from the object, on a string it backtracks on: false, within a second', () => {
    const condition = compileCondition('status.message.matches(metadata.annotations.pattern)');
    const object = {
      metadata: { annotations: { pattern: '^(a+)+$' } },
      status: { message: `${'a'.repeat(60)}b` },
    };
    let verdict: boolean | undefined;
    expect(cpuMs(() => (verdict = condition.evaluate(object)))).toBeLessThan(1000);
    expect(verdict).toBe(false);
  });

  it("in Go's dialect: $ is the end of the text, \\s is ASCII, POSIX classes", () => {
    const check = (expression: string) => compileCondition(expression).evaluate({});
    expect(check(`"a\\n".matches("^a$")`)).toBe(false);
    expect(check(`"a\\u00a0b".matches("^\\\\S+$")`)).toBe(true);
    expect(check(`"abc".matches("^[[:alpha:]]+$")`)).toBe(true);
  });

  it("a pattern Go's regexp refuses, or one past sluice's bounds, is an evaluation error naming why", () => {
    const condition = compileCondition('status.message.matches(status.pattern)');
    expect(() => condition.evaluate({ status: { message: 'aa', pattern: '(a)\\1' } })).toThrow(
      'error parsing regexp: invalid escape sequence: `\\1`',
    );
    expect(() => condition.evaluate({ status: { message: 'x', pattern: 'x{999}'.repeat(6) } })).toThrow(
      CelEvaluationError,
    );
    expect(() => condition.evaluate({ status: { message: 'x', pattern: 'x{999}'.repeat(6) } })).toThrow(
      'sluice evaluates patterns of at most',
    );
  });
});
