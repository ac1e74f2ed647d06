// Regular expressions that come from input (a CRD's `pattern`, a sops file's encrypted_regex,
// CEL's matches(), rollout member patterns) in Go's regexp dialect, the one their consumers use
// (the API server, sops, cel-go), with re2js: a port of Go's regexp that matches in time linear in
// the input. JavaScript's RegExp backtracks (`^(a+)+$` on 'a'×40+'b' blocks the event loop for
// minutes) and speaks another dialect (`$`, `\s`, `\z`, `(?i)`, `\pL`, `[[:alpha:]]`), so nothing
// from input reaches it. Linear is not yet bounded: a pattern and an input are bounded too, so one
// match does at most REGEXP_LIMITS.steps steps (tens of milliseconds).
import { RE2JS, RE2JSException } from 're2js';

export const REGEXP_LIMITS = {
  /** Characters of a pattern. */
  patternLength: 4096,
  /** Instructions a pattern compiles to, estimated from its text before it is compiled (compiling is not linear). */
  programSize: 10_000,
  /** Instructions × (characters of the input + 1): the most one match may do (about 20 ms at worst, measured; 130 ms at twice that). */
  steps: 500_000,
} as const;

/**
 * A pattern that is not Go regexp syntax (`syntax`: the message is Go's, `error parsing regexp: …`),
 * or a pattern or input past REGEXP_LIMITS (`limit`).
 */
export class GoRegexpError extends Error {
  override readonly name = 'GoRegexpError';
  constructor(
    message: string,
    readonly reason: 'syntax' | 'limit',
  ) {
    super(message);
  }
}

export interface GoRegexp {
  readonly source: string;
  /** Instructions of the compiled program. */
  readonly size: number;
  /** Whether a match of `text` stays within REGEXP_LIMITS.steps. */
  fits(text: string): boolean;
  /** Go's MatchString: whether the pattern matches anywhere in `text`. Throws GoRegexpError (`limit`) when `text` does not fit. */
  test(text: string): boolean;
}

/**
 * About as many instructions as `pattern` compiles to, or more: each atom 1, a group its content
 * and 2, a counted repetition `{n,m}` m+1 copies of what it repeats and a branch each. Cheap and conservative, so that a
 * pattern like `x{1000}x{1000}…`, short to write and slow to compile, is refused before compiling.
 */
export function estimatedProgramSize(pattern: string): number {
  interface Frame {
    done: number;
    current: number;
    last: number;
  }
  const stack: Frame[] = [];
  let frame: Frame = { done: 0, current: 0, last: 0 };
  const atom = (size: number) => {
    frame.current += size;
    frame.last = size;
  };
  const close = () => {
    const size = frame.done + frame.current + 2;
    frame = stack.pop() ?? { done: 0, current: 0, last: 0 };
    atom(size);
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const literal = end < 0 ? pattern.slice(i + 2) : pattern.slice(i + 2, end);
        for (const _ of literal) atom(1);
        i = end < 0 ? pattern.length : end + 2;
        continue;
      }
      if ((next === 'p' || next === 'P' || next === 'x') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        i = end < 0 ? pattern.length : end + 1;
      } else i += next === 'p' || next === 'P' ? 3 : 2;
      atom(1);
    } else if (c === '[') {
      i = classEnd(pattern, i);
      atom(1);
    } else if (c === '(') {
      const flagsOnly = /^\(\?[imsU-]*\)/.exec(pattern.slice(i, i + 12));
      if (flagsOnly) {
        i += flagsOnly[0].length;
        continue;
      }
      stack.push(frame);
      frame = { done: 0, current: 0, last: 0 };
      i++;
    } else if (c === ')') {
      close();
      i++;
    } else if (c === '|') {
      frame.done += frame.current + 1;
      frame.current = 0;
      frame.last = 0;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      frame.current += 1;
      frame.last += 1;
      i++;
    } else if (c === '{' && /^\{\d+(,\d*)?\}/.test(pattern.slice(i, i + 24))) {
      const [text, min, max] = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i, i + 24))!;
      // Go refuses a count past 1000 ("invalid repeat count"): capped, the compile says so.
      const times = Math.min(1001, Math.max(Number(min), Number(max || 0))) + 1;
      const repeated = (frame.last + 1) * times;
      frame.current += repeated - frame.last;
      frame.last = repeated;
      i += text.length;
    } else {
      atom(1);
      i += c.codePointAt(0)! > 0xffff ? 2 : 1;
    }
  }
  while (stack.length > 0) close();
  return frame.done + frame.current + 2;
}

/** Where the class opened at `start` ends (past its `]`); its first `]` (after an optional `^`) is a literal. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length) {
    if (pattern[i] === '\\') i += 2;
    else if (pattern.startsWith('[:', i)) {
      const end = pattern.indexOf(':]', i + 2);
      i = end < 0 ? i + 1 : end + 2;
    } else if (pattern[i] === ']') return i + 1;
    else i++;
  }
  return pattern.length;
}

/** Go's regexp works on UTF-8 and sees a lone surrogate (which JSON cannot carry to it) as U+FFFD. */
const asGo = (text: string) => text.replace(/\p{Cs}/gu, '\uFFFD');

/** Compiles a Go (RE2) regular expression; throws GoRegexpError saying why not. */
export function compileGoRegexp(pattern: string): GoRegexp {
  if (pattern.length > REGEXP_LIMITS.patternLength)
    throw new GoRegexpError(
      `is ${pattern.length} characters long; sluice evaluates patterns of at most ${REGEXP_LIMITS.patternLength}`,
      'limit',
    );
  const estimate = estimatedProgramSize(pattern);
  if (estimate > REGEXP_LIMITS.programSize)
    throw new GoRegexpError(
      `may compile to ${estimate} instructions; sluice evaluates patterns of at most ${REGEXP_LIMITS.programSize}`,
      'limit',
    );
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    if (error instanceof RE2JSException) throw new GoRegexpError(error.message, 'syntax');
    throw error;
  }
  const size = compiled.programSize();
  const maxInput = Math.floor(REGEXP_LIMITS.steps / Math.max(size, 1)) - 1;
  const fits = (text: string) => text.length <= maxInput;
  return {
    source: pattern,
    size,
    fits,
    test(text) {
      if (!fits(text))
        throw new GoRegexpError(
          `cannot be matched against ${text.length} characters within sluice's bound (${maxInput} for this pattern)`,
          'limit',
        );
      return compiled.test(asGo(text));
    },
  };
}
