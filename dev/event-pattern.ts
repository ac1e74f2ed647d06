// EventBridge event patterns, matched as EventBridge's content filtering documents them
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html):
// exact values (an array is an OR), prefix, suffix, anything-but, exists, numeric,
// equals-ignore-case, wildcard and $or. An operator it does not implement (cidr, or one it does not
// know) makes the pattern an error naming it: the stand-in never guesses what a rule would match.

/** A pattern the stand-in cannot take, with the path of the field. */
export class EventPatternError extends Error {}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Leaf = (value: Json | undefined) => boolean;
export type EventMatcher = (event: unknown) => boolean;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const NOT_IMPLEMENTED = ['cidr'];

/** Compiles `pattern` (an EventPattern object, or its JSON text) into a matcher; throws on any pattern it does not understand. */
export function compileEventPattern(pattern: unknown): EventMatcher {
  const parsed: unknown = typeof pattern === 'string' ? parseJson(pattern) : pattern;
  if (!isObject(parsed)) throw new EventPatternError('an event pattern must be a JSON object');
  const match = compileObject(parsed, '');
  return (event) => match(event);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new EventPatternError(`the event pattern is not JSON: ${(error as Error).message}`);
  }
}

function compileObject(pattern: Record<string, unknown>, path: string): (value: unknown) => boolean {
  const fields = Object.entries(pattern);
  if (fields.length === 0)
    throw new EventPatternError(`${path || 'the pattern'}: an empty object matches nothing`);
  const checks = fields.map(([key, sub]): ((value: unknown) => boolean) => {
    const where = path ? `${path}.${key}` : key;
    if (key === '$or') {
      if (!Array.isArray(sub) || sub.length < 2 || !sub.every(isObject))
        throw new EventPatternError(`${where}: $or takes an array of at least two patterns (objects)`);
      const alternatives = sub.map((alternative, i) => compileObject(alternative, `${where}[${i}]`));
      return (value) => alternatives.some((alternative) => alternative(value));
    }
    if (Array.isArray(sub)) {
      if (sub.length === 0) throw new EventPatternError(`${where}: an empty array matches nothing`);
      const leaves = sub.map((element, i) => compileLeaf(element, `${where}[${i}]`));
      return (value) => {
        const field = isObject(value) ? (value[key] as Json | undefined) : undefined;
        // An array in the event matches when any of its elements does.
        if (Array.isArray(field)) return field.some((element) => leaves.some((leaf) => leaf(element)));
        return leaves.some((leaf) => leaf(field));
      };
    }
    if (isObject(sub)) {
      const nested = compileObject(sub, where);
      return (value) => {
        const field = isObject(value) ? value[key] : undefined;
        if (Array.isArray(field)) return field.some((element) => nested(element));
        return nested(isObject(field) ? field : {});
      };
    }
    throw new EventPatternError(
      `${where}: a pattern's values are arrays of matches or nested objects, not ${JSON.stringify(sub)}`,
    );
  });
  return (value) => checks.every((check) => check(value));
}

const isScalar = (value: unknown): value is string | number | boolean | null =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value);

function compileLeaf(element: unknown, where: string): Leaf {
  if (isScalar(element)) return (value) => value !== undefined && equalValues(value, element);
  if (!isObject(element)) throw new EventPatternError(`${where}: ${JSON.stringify(element)} is not a match`);
  const keys = Object.keys(element);
  if (keys.length !== 1)
    throw new EventPatternError(
      `${where}: a match operator object has exactly one key, not ${keys.join(', ')}`,
    );
  const operator = keys[0]!;
  const argument = element[operator];
  const at = `${where}.${operator}`;
  switch (operator) {
    case 'prefix':
      return affix(argument, at, (value, text) => value.startsWith(text));
    case 'suffix':
      return affix(argument, at, (value, text) => value.endsWith(text));
    case 'equals-ignore-case': {
      const text = nonEmptyString(argument, at);
      return (value) => typeof value === 'string' && value.toLowerCase() === text.toLowerCase();
    }
    case 'wildcard': {
      const regex = wildcardRegex(nonEmptyString(argument, at, true), at);
      return (value) => typeof value === 'string' && regex.test(value);
    }
    case 'exists':
      if (typeof argument !== 'boolean') throw new EventPatternError(`${at}: exists takes true or false`);
      return argument ? (value) => value !== undefined && !isObject(value) : (value) => value === undefined;
    case 'numeric':
      return numeric(argument, at);
    case 'anything-but':
      return anythingBut(argument, at);
    default:
      throw new EventPatternError(
        NOT_IMPLEMENTED.includes(operator)
          ? `${at}: the EventBridge stand-in does not implement the '${operator}' operator`
          : `${at}: '${operator}' is not an EventBridge match operator`,
      );
  }
}

function equalValues(value: Json, expected: string | number | boolean | null): boolean {
  if (typeof expected === 'number') return typeof value === 'number' && value === expected;
  return value === expected;
}

function nonEmptyString(argument: unknown, at: string, allowEmpty = false): string {
  if (typeof argument !== 'string' || (!allowEmpty && argument === ''))
    throw new EventPatternError(`${at}: takes a${allowEmpty ? '' : ' non-empty'} string`);
  return argument;
}

/** prefix/suffix: a string, or `{"equals-ignore-case": "…"}`; matches string values only. */
function affix(argument: unknown, at: string, test: (value: string, text: string) => boolean): Leaf {
  if (typeof argument === 'string') return (value) => typeof value === 'string' && test(value, argument);
  if (isObject(argument) && Object.keys(argument).join() === 'equals-ignore-case') {
    const text = nonEmptyString(argument['equals-ignore-case'], `${at}.equals-ignore-case`).toLowerCase();
    return (value) => typeof value === 'string' && test(value.toLowerCase(), text);
  }
  throw new EventPatternError(`${at}: takes a string or {"equals-ignore-case": string}`);
}

/** `*` stands for any characters, `\*` for a star; two stars in a row are refused, as EventBridge does. */
function wildcardRegex(text: string, at: string): RegExp {
  if (/(?<!\\)\*\*/.test(text))
    throw new EventPatternError(`${at}: consecutive wildcard characters are not allowed`);
  let source = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && text[i + 1] === '*') {
      source += '\\*';
      i++;
    } else if (c === '*') source += '.*';
    else source += c.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

const LOWER = ['>', '>='];
const UPPER = ['<', '<='];

/** `{"numeric": [">", 0, "<=", 5]}` or `["=", 3]`: numbers only, at most one lower and one upper bound. */
function numeric(argument: unknown, at: string): Leaf {
  if (!Array.isArray(argument) || argument.length === 0 || argument.length % 2 !== 0 || argument.length > 4)
    throw new EventPatternError(`${at}: takes [op, number] or [lower op, number, upper op, number]`);
  const tests: ((n: number) => boolean)[] = [];
  const ops: string[] = [];
  for (let i = 0; i < argument.length; i += 2) {
    const op: unknown = argument[i];
    const bound: unknown = argument[i + 1];
    if (typeof bound !== 'number' || !Number.isFinite(bound))
      throw new EventPatternError(`${at}: ${JSON.stringify(bound)} is not a number`);
    if (op === '=') tests.push((n) => n === bound);
    else if (op === '>') tests.push((n) => n > bound);
    else if (op === '>=') tests.push((n) => n >= bound);
    else if (op === '<') tests.push((n) => n < bound);
    else if (op === '<=') tests.push((n) => n <= bound);
    else throw new EventPatternError(`${at}: ${JSON.stringify(op)} is not one of =, <, <=, >, >=`);
    ops.push(op);
  }
  if (
    ops.length === 2 &&
    !(LOWER.includes(ops[0]!) && UPPER.includes(ops[1]!)) &&
    !(UPPER.includes(ops[0]!) && LOWER.includes(ops[1]!))
  )
    throw new EventPatternError(`${at}: two bounds must be one lower (>, >=) and one upper (<, <=)`);
  return (value) => typeof value === 'number' && tests.every((test) => test(value));
}

/**
 * anything-but: a value or a list of values (strings or numbers), or one of prefix, suffix,
 * equals-ignore-case, wildcard. Matches a field that is present and matches none of them.
 */
function anythingBut(argument: unknown, at: string): Leaf {
  const present =
    (test: Leaf): Leaf =>
    (value) =>
      value !== undefined && !test(value);
  if (typeof argument === 'string' || typeof argument === 'number')
    return present((value) => value !== undefined && equalValues(value, argument));
  if (Array.isArray(argument)) {
    if (argument.length === 0) throw new EventPatternError(`${at}: an empty list matches nothing`);
    const strings = argument.every((v) => typeof v === 'string');
    const numbers = argument.every((v) => typeof v === 'number');
    if (!strings && !numbers)
      throw new EventPatternError(`${at}: takes a list of strings or a list of numbers`);
    return present(
      (value) => value !== undefined && argument.some((v) => equalValues(value, v as string | number)),
    );
  }
  if (isObject(argument) && Object.keys(argument).length === 1) {
    const [operator] = Object.keys(argument) as [string];
    const inner = argument[operator];
    const where = `${at}.${operator}`;
    const list = (values: unknown): string[] => {
      const all = Array.isArray(values) ? values : [values];
      if (all.length === 0 || !all.every((v) => typeof v === 'string'))
        throw new EventPatternError(`${where}: takes a string or a list of strings`);
      return all as string[];
    };
    switch (operator) {
      case 'prefix': {
        const text = nonEmptyString(inner, where);
        return present((value) => typeof value === 'string' && value.startsWith(text));
      }
      case 'suffix': {
        const text = nonEmptyString(inner, where);
        return present((value) => typeof value === 'string' && value.endsWith(text));
      }
      case 'equals-ignore-case': {
        const texts = list(inner).map((text) => text.toLowerCase());
        return present((value) => typeof value === 'string' && texts.includes(value.toLowerCase()));
      }
      case 'wildcard': {
        const regexes = list(inner).map((text) => wildcardRegex(text, where));
        return present((value) => typeof value === 'string' && regexes.some((regex) => regex.test(value)));
      }
      default:
        throw new EventPatternError(`${where}: anything-but does not take '${operator}'`);
    }
  }
  throw new EventPatternError(`${at}: takes a value, a list of values or one operator object`);
}
