import type { CelEnv, parse } from '@bufbuild/cel';

type Expr = ReturnType<typeof parse>['expr'];
type Call = Extract<Expr['exprKind'], { case: 'callExpr' }>['value'];

/** Operators the evaluator implements itself rather than as declared functions. */
const BUILT_IN = new Set([
  '_[_]',
  '_[?_]',
  '_?._',
  '_?_:_',
  '_&&_',
  '_||_',
  '@not_strictly_false',
  '__not_strictly_false__',
]);
/** How each macro is called: a call of one is left unexpanded, as a plain call, when it does not fit. */
const COMPREHENSION = "a variable and a condition, as in status.conditions.exists(c, c.type == 'Ready')";
const MACRO_USAGE: Readonly<Record<string, string>> = {
  has: 'a field selection, as in has(status.phase)',
  all: COMPREHENSION,
  exists: COMPREHENSION,
  exists_one: COMPREHENSION,
  existsOne: COMPREHENSION,
  filter: COMPREHENSION,
  map: 'a variable and an expression (and optionally a condition before it), as in list.map(x, x.name)',
};

/**
 * What is wrong with `expr` (worded to follow the quoted expression), or undefined. @bufbuild/cel
 * does not export its type checker, and an object's fields are unknown until it is read (Flux
 * only parses, for the same reason), so this checks what the environment's function declarations
 * tell: that every function called exists in that form, and that the expression is not evidently
 * something other than a bool.
 */
export function staticProblem(expr: Expr, env: CelEnv): string | undefined {
  const call = badCall(expr, env);
  if (call) return call;
  const type = typeOf(expr, env, new Map());
  return type && type !== 'bool' ? `never evaluates to a bool (true or false): it gives ${type}` : undefined;
}

/** The first call, depth first, of a function the environment lacks or does not declare so. */
function badCall(expr: Expr, env: CelEnv): string | undefined {
  for (const child of children(expr)) {
    const problem = badCall(child, env);
    if (problem) return problem;
  }
  if (expr.exprKind.case !== 'callExpr') return undefined;
  const call = expr.exprKind.value;
  if (BUILT_IN.has(call.function) || isQualifiedFunction(call, env)) return undefined;
  const usage = MACRO_USAGE[call.function];
  if (usage) return `calls the macro ${call.function}() wrongly: it takes ${usage}`;
  const overloads = [...(env.funcs.find(call.function) ?? [])];
  if (overloads.length === 0) return `calls ${call.function}(), which is not a CEL function`;
  const method = call.target !== undefined;
  if (overloads.some((f) => (f.target !== undefined) === method && f.arguments.length === call.args.length)) {
    return undefined;
  }
  const count = `${call.args.length} argument${call.args.length === 1 ? '' : 's'}`;
  return `calls ${call.function}() ${method ? 'as a method ' : ''}with ${count}, which it does not take`;
}

/** `strings.quote(x)`: a function whose name has dots, as the evaluator resolves it. */
function isQualifiedFunction(call: Call, env: CelEnv): boolean {
  const qualifier = call.target && qualifiedName(call.target);
  return qualifier !== undefined && env.funcs.find(`${qualifier}.${call.function}`) !== undefined;
}

function qualifiedName(expr: Expr): string | undefined {
  if (expr.exprKind.case === 'identExpr') return expr.exprKind.value.name;
  if (expr.exprKind.case !== 'selectExpr') return undefined;
  const operand = expr.exprKind.value.operand;
  const prefix = operand && qualifiedName(operand);
  return prefix === undefined ? undefined : `${prefix}.${expr.exprKind.value.field}`;
}

/** The variables `expr` reads: its identifiers, less those its comprehensions bind. */
export function variablesOf(expr: Expr): string[] {
  const names = new Set<string>();
  const bound = new Set<string>();
  const visit = (e: Expr) => {
    if (e.exprKind.case === 'identExpr') names.add(e.exprKind.value.name);
    if (e.exprKind.case === 'comprehensionExpr') {
      const { iterVar, iterVar2, accuVar } = e.exprKind.value;
      for (const name of [iterVar, iterVar2, accuVar]) if (name) bound.add(name);
    }
    children(e).forEach(visit);
  };
  visit(expr);
  return [...names].filter((name) => !bound.has(name));
}

function children(expr: Expr): Expr[] {
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'selectExpr':
      return kind.value.operand ? [kind.value.operand] : [];
    case 'callExpr':
      return [...(kind.value.target ? [kind.value.target] : []), ...kind.value.args];
    case 'listExpr':
      return kind.value.elements;
    case 'structExpr':
      return kind.value.entries.flatMap((e) => [
        ...(e.keyKind.case === 'mapKey' ? [e.keyKind.value] : []),
        ...(e.value ? [e.value] : []),
      ]);
    case 'comprehensionExpr': {
      const c = kind.value;
      return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].filter(
        (e): e is Expr => e !== undefined,
      );
    }
    default:
      return [];
  }
}

/**
 * The type `expr` evaluates to when it is evident from its shape (`bool`, `an int`, `a list`, …),
 * else undefined. `locals` holds the types of comprehension variables known so far.
 */
function typeOf(expr: Expr, env: CelEnv, locals: ReadonlyMap<string, string>): string | undefined {
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'constExpr':
      return CONSTANT_TYPES[kind.value.constantKind.case ?? ''];
    case 'listExpr':
      return 'a list';
    case 'structExpr':
      return kind.value.messageName ? undefined : 'a map';
    case 'identExpr':
      return locals.get(kind.value.name);
    case 'selectExpr':
      return kind.value.testOnly ? 'bool' : undefined;
    case 'comprehensionExpr': {
      const c = kind.value;
      const accumulator = c.accuInit && typeOf(c.accuInit, env, locals);
      const inner = new Map(locals);
      inner.delete(c.iterVar);
      if (accumulator) inner.set(c.accuVar, accumulator);
      else inner.delete(c.accuVar);
      return c.result && typeOf(c.result, env, inner);
    }
    case 'callExpr':
      return callType(kind.value, env, locals);
    default:
      return undefined;
  }
}

function callType(call: Call, env: CelEnv, locals: ReadonlyMap<string, string>): string | undefined {
  if (call.function === '_&&_' || call.function === '_||_' || call.function.endsWith('not_strictly_false')) {
    return 'bool';
  }
  if (call.function === '_?_:_') {
    const [yes, no] = call.args.slice(1).map((branch) => typeOf(branch, env, locals));
    return yes === no ? yes : undefined;
  }
  if (BUILT_IN.has(call.function) || isQualifiedFunction(call, env)) return undefined;
  return resultType(call, env);
}

/** The result type of the declared overloads the call can mean, when none may be a bool. */
function resultType(call: Call, env: CelEnv): string | undefined {
  const method = call.target !== undefined;
  const results = new Set(
    [...(env.funcs.find(call.function) ?? [])]
      .filter((f) => (f.target !== undefined) === method && f.arguments.length === call.args.length)
      .map((f) => f.result.name),
  );
  if (results.size === 0 || results.has('dyn')) return undefined;
  if (results.has('bool')) return 'bool';
  return [...results].map(withArticle).join(' or ');
}

/** `int` → `an int`, `google.protobuf.Duration` → `a duration`. */
function withArticle(name: string): string {
  const short = name.replace(/^google\.protobuf\./, '').toLowerCase();
  if (short === 'bytes') return short;
  return `${short === 'int' ? 'an' : 'a'} ${short}`;
}

const CONSTANT_TYPES: Record<string, string> = {
  boolValue: 'bool',
  int64Value: 'an int',
  uint64Value: 'a uint',
  doubleValue: 'a double',
  stringValue: 'a string',
  bytesValue: 'bytes',
  nullValue: 'null',
};
