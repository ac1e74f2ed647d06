import { celEnv, celType, isCelError, parse, plan, type CelInput } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { CelEvaluationError, type CelCondition } from './condition.ts';
import { staticProblem, variablesOf } from './static-check.ts';
import { compileGoRegexp, type GoRegexp } from '../go-regexp.ts';

const compiled = new Map<string, GoRegexp>();

/**
 * `matches()` as cel-go runs it (Go's regexp), bounded (go-regexp.ts): its pattern may come from
 * the object (`a.matches(b)`). A pattern that does not compile, or an input past the bound, is an
 * evaluation error.
 */
const boundedRe2 = {
  compile(pattern: string): GoRegexp {
    let regexp = compiled.get(pattern);
    if (!regexp) {
      regexp = compileGoRegexp(pattern);
      if (compiled.size >= 100) compiled.clear();
      compiled.set(pattern, regexp);
    }
    return regexp;
  },
};

/**
 * CEL's standard functions and macros and the strings extension. Flux's environment also has
 * the sets and encoders extensions and optional syntax (`a.?b`), which @bufbuild/cel does not.
 */
const CEL_ENV = celEnv({ funcs: strings, re2: boundedRe2 });

/** Why `source` cannot be compiled, or undefined when it can. */
export function celProblem(source: string): string | undefined {
  try {
    compileCondition(source);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Parses `source` and checks what can be known without the object: the functions it calls and,
 * where it is evident, that it yields a bool. Throws an Error naming the problem.
 */
export function compileCondition(source: string): CelCondition {
  const parsed = parseOrExplain(source);
  const problem = staticProblem(parsed.expr, CEL_ENV);
  if (problem) throw new Error(`"${source}" ${problem}`);
  const program = plan(CEL_ENV, parsed);
  const variables = variablesOf(parsed.expr);
  return {
    source,
    evaluate(object) {
      const value = runSafely(() => program(toCel(object) as Record<string, CelInput>));
      if (isCelError(value)) throw new CelEvaluationError(explain(value.message, variables, object));
      if (typeof value !== 'boolean') {
        throw new CelEvaluationError(`evaluates to ${celType(value).name}, not a bool`);
      }
      return value;
    },
  };
}

/** The evaluator's "unresolved attribute" means a variable is missing: name the fields the object lacks. */
function explain(message: string, variables: readonly string[], object: object): string {
  if (message !== 'unresolved attribute') return message;
  const missing = variables.filter((name) => !Object.hasOwn(object, name));
  return missing.length > 0
    ? `the object has no ${missing.map((name) => `"${name}"`).join(' or ')} field`
    : message;
}

const OPTIONAL_SYNTAX_HINT =
  '; optional syntax (a.?b, a[?b]) is not supported: guard the field with has(a.b) instead';

/** The evaluator reports errors as values; anything it throws is reported the same way. */
function runSafely<T>(evaluate: () => T): T {
  try {
    return evaluate();
  } catch (error) {
    throw new CelEvaluationError(error instanceof Error ? error.message : String(error), { cause: error });
  }
}

function parseOrExplain(source: string): ReturnType<typeof parse> {
  try {
    return parse(source);
  } catch (error) {
    const message = (error as Error).message;
    const at = /^<input>:(\d+):(\d+): (.*)$/s.exec(message);
    const where = at ? `line ${at[1]}, column ${at[2]}: ${at[3]}` : message;
    const hint = /\.\?|\[\?/.test(source) ? OPTIONAL_SYNTAX_HINT : '';
    throw new Error(`"${source}" is not valid CEL (${where})${hint}`, { cause: error });
  }
}

/**
 * A JSON value as CEL sees it. Whole numbers become CEL ints, as in Kubernetes objects decoded
 * by Go (Flux): `metadata.generation + 1` works, and `status.replicas == 3` compares int to int.
 */
function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, toCel(field)]));
  }
  return value;
}
