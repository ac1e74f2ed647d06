// Regular expressions from input in Go's dialect, in linear time and bounded. What Go itself does
// with each case is checked against the real API server by
// test/core/manifests/pattern-differential.test.ts; these are the named cases and the bounds.
import { describe, expect, it } from 'vitest';
import {
  compileGoRegexp,
  estimatedProgramSize,
  GoRegexpError,
  REGEXP_LIMITS,
} from '../../functions/core/go-regexp.ts';

const matches = (pattern: string, text: string) => compileGoRegexp(pattern).test(text);

// The first match loads re2js's Unicode tables, once per process.
compileGoRegexp('\\pL(?i)k').test('x');

describe("Go's dialect", () => {
  it('$ is the end of the text and . is not a newline, unless flags say so', () => {
    expect(matches('^a$', 'a\n')).toBe(false);
    expect(matches('a$', 'a\nb')).toBe(false);
    expect(matches('(?m)a$', 'a\nb')).toBe(true);
    expect(matches('^a.b$', 'a\nb')).toBe(false);
    expect(matches('^a.b$', 'a\rb')).toBe(true);
    expect(matches('(?s)^a.b$', 'a\nb')).toBe(true);
    expect(matches('^a\\z', 'a')).toBe(true);
    expect(matches('\\Aa\\z', 'a\n')).toBe(false);
  });

  it('\\s, \\w, \\d and \\b are ASCII; \\pL, POSIX classes and (?i) work as in Go', () => {
    expect(matches('^\\S+$', 'a\u00a0b')).toBe(true);
    expect(matches('\\s', '\u000b')).toBe(false);
    expect(matches('^\\w$', 'é')).toBe(false);
    expect(matches('^\\d$', '٣')).toBe(false);
    expect(matches('^\\pL+$', 'éΩж')).toBe(true);
    expect(matches('^[[:alpha:]]+$', 'abc')).toBe(true);
    expect(matches('^[[:alpha:]]+$', 'é')).toBe(false);
    expect(matches('(?i)^k$', '\u212a')).toBe(true);
    expect(matches('^.$', '😀')).toBe(true);
    expect(matches('(?P<n>a)(?<m>b)', 'ab')).toBe(true);
  });

  it('matches anywhere in the text, as MatchString does', () => {
    expect(matches('b', 'abc')).toBe(true);
    expect(matches('^b', 'abc')).toBe(false);
  });

  it("refuses what Go's regexp does not compile, with Go's message", () => {
    for (const [pattern, message] of [
      ['(a)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
      ['(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
      ['+', 'error parsing regexp: missing argument to repetition operator: `+`'],
      ['a**', 'error parsing regexp: invalid nested repetition operator: `**`'],
      ['a{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
      ['\\Z', 'error parsing regexp: invalid escape sequence: `\\Z`'],
    ]) {
      expect(() => compileGoRegexp(pattern!), pattern).toThrow(message);
    }
  });
});

describe('bounds', () => {
  it("decides ^(a+)+$ on 60 a's and a b, and on the longest input it takes, well within 100 ms", () => {
    const regexp = compileGoRegexp('^(a+)+$');
    expect(regexp.test(`${'a'.repeat(60)}b`)).toBe(false);
    const longest = Math.floor(REGEXP_LIMITS.steps / regexp.size) - 1;
    expect(regexp.fits(`${'a'.repeat(longest - 1)}b`)).toBe(true);
    expect(regexp.test(`${'a'.repeat(longest - 1)}b`)).toBe(false);
    expect(() => regexp.test('a'.repeat(longest + 1))).toThrow(GoRegexpError);
  });

  it('refuses a pattern too long, or that would compile too large, before compiling it', () => {
    expect(() => compileGoRegexp('a'.repeat(REGEXP_LIMITS.patternLength + 1))).toThrow(
      `is ${REGEXP_LIMITS.patternLength + 1} characters long`,
    );
    const large = (() => {
      try {
        compileGoRegexp('x{1000}'.repeat(580));
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    expect(large).toBeInstanceOf(GoRegexpError);
    expect((large as GoRegexpError).reason).toBe('limit');
    expect((large as GoRegexpError).message).toMatch(/may compile to \d+ instructions/);
  });

  it('estimates at least the size the compiled program has', () => {
    for (const pattern of [
      '^(a+)+$',
      '(?i)[a-z]{2,5}\\pL(?:ab|cd)*',
      '^(([0-9A-Fa-f]{1,4}:){7}([0-9A-Fa-f]{1,4}|:))$',
      '((a{10}){10}){10}',
      '\\Qa.b\\E+',
      '[]a]{3}',
      'x{999}y{999}',
    ])
      expect(estimatedProgramSize(pattern), pattern).toBeGreaterThanOrEqual(compileGoRegexp(pattern).size);
  });

  // The work of a match is bounded by REGEXP_LIMITS.steps (program size × input length), whatever
  // the machine's load: the bound, not a wall-clock time, is what this checks.
  it('the worst patterns within the bounds compile, and their longest input fits the step bound', () => {
    const worst = [
      '(?:[\\pL\\pN]{50}x){20}',
      '(?:.{30}x){30}',
      '(?i)(?:[a-zé]{99}q){9}',
      `(?:${Array.from({ length: 350 }, (_, i) => `w${i}[a-z]*`).join('|')})q`,
    ];
    for (const pattern of worst) {
      const compiled = compileGoRegexp(pattern);
      const longest = Math.floor(REGEXP_LIMITS.steps / compiled.size) - 1;
      const input = Array.from({ length: longest }, (_, i) => 'abcxyzé'[i % 7]).join('');
      expect(compiled.fits(input), pattern).toBe(true);
      expect(compiled.size * input.length, pattern).toBeLessThanOrEqual(REGEXP_LIMITS.steps);
      expect(typeof compiled.test(input), pattern).toBe('boolean');
      expect(compiled.fits(`${input}ab`), pattern).toBe(false);
    }
  });
});
