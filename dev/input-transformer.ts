// A rule target's InputTransformer, applied as EventBridge documents it
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-transform-target-input.html, and
// the API reference's InputTransformer):
// - InputPathsMap names JSON paths of the event (dot notation, dashes, underscores, array indices);
// - every `<name>` in InputTemplate is a placeholder (`<` and `>` cannot be escaped) and must be a
//   key of InputPathsMap or a predefined variable, or PutTargets refuses the target;
// - a template is a quoted string (`"instance <instance> is in <state>"`, delivered with its quotes,
//   as the SNS tutorial shows) or JSON (delivered minified);
// - inside a quoted string a value goes in as it is, not escaped; an object or array there loses
//   its inner quotes; outside quotes a string value is quoted; a path absent from the event gives
//   an empty value.
// Anything else (a wildcard path, a template that is neither, aws.events.event inside a string)
// is an error naming the target: the stand-in does not guess.

export class InputTransformerError extends Error {}

export interface InputTransformerSpec {
  readonly InputPathsMap?: Readonly<Record<string, string>>;
  readonly InputTemplate: string;
}

/** What the predefined variables stand for at one delivery. */
export interface DeliveryContext {
  readonly ruleArn: string;
  readonly ruleName: string;
  readonly ingestionTime: string;
}

const PREDEFINED_STRINGS = ['aws.events.rule-arn', 'aws.events.rule-name', 'aws.events.event.ingestion-time'];
const PREDEFINED_JSON = ['aws.events.event', 'aws.events.event.json'];
const KEY = /^[A-Za-z0-9_-]+$/;
const PATH = /^\$(?:\.[A-Za-z0-9_/-]+|\[\d+\])*$/;

/** Reads `path` (`$.detail.a-b[0]`) of `value`; undefined when absent. Wildcards are refused. */
export function readJsonPath(value: unknown, path: string, where: string): unknown {
  if (path.includes('*'))
    throw new InputTransformerError(
      `${where}: the EventBridge stand-in does not implement wildcard paths (${path})`,
    );
  if (!PATH.test(path))
    throw new InputTransformerError(`${where}: '${path}' is not a JSON path EventBridge reads`);
  let current: unknown = value;
  for (const [, key, index] of path.slice(1).matchAll(/\.([^.[]+)|\[(\d+)\]/g)) {
    if (current === null || typeof current !== 'object') return undefined;
    current =
      index !== undefined
        ? Array.isArray(current)
          ? current[Number(index)]
          : undefined
        : Array.isArray(current)
          ? undefined
          : (current as Record<string, unknown>)[key!];
  }
  return current;
}

interface Segment {
  readonly text?: string;
  readonly placeholder?: string;
  readonly quoted: boolean;
}

/** The template cut into text and placeholders, each placeholder knowing whether it sits inside a JSON string. */
function segments(template: string): Segment[] {
  const out: Segment[] = [];
  let text = '';
  let quoted = false;
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c === '<') {
      const end = template.indexOf('>', i + 1);
      if (end > i) {
        out.push({ text, quoted }, { placeholder: template.slice(i + 1, end), quoted });
        text = '';
        i = end;
        continue;
      }
    }
    if (quoted && c === '\\') {
      text += c + (template[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    text += c;
  }
  out.push({ text, quoted });
  return out;
}

function kindOf(template: string, where: string): 'string' | 'json' {
  const trimmed = template.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return 'json';
  if (trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')) return 'string';
  throw new InputTransformerError(
    `${where}: InputTemplate is neither a quoted string nor JSON (the stand-in does not guess how EventBridge renders ${JSON.stringify(template.slice(0, 40))})`,
  );
}

/** Checks a target's InputTransformer as PutTargets does, and what the stand-in can render. */
export function checkInputTransformer(spec: InputTransformerSpec, where: string): void {
  if (typeof spec.InputTemplate !== 'string' || spec.InputTemplate === '')
    throw new InputTransformerError(`${where}: InputTemplate must be a non-empty string`);
  const paths = spec.InputPathsMap ?? {};
  const keys = Object.keys(paths);
  if (keys.length > 100) throw new InputTransformerError(`${where}: InputPathsMap holds at most 100 entries`);
  for (const [key, path] of Object.entries(paths)) {
    if (!KEY.test(key) || key.toLowerCase().startsWith('aws.'))
      throw new InputTransformerError(`${where}: InputPathsMap key '${key}' is not [A-Za-z0-9_-]+`);
    readJsonPath({}, path, `${where}: InputPathsMap.${key}`);
  }
  kindOf(spec.InputTemplate, where);
  for (const segment of segments(spec.InputTemplate)) {
    const name = segment.placeholder;
    if (name === undefined) continue;
    if (!keys.includes(name) && !PREDEFINED_STRINGS.includes(name) && !PREDEFINED_JSON.includes(name))
      throw new InputTransformerError(`${where}: InputTemplate contains invalid placeholder ${name}`);
    if (segment.quoted && PREDEFINED_JSON.includes(name))
      throw new InputTransformerError(
        `${where}: <${name}> can only be the value of a JSON field, not inside a string`,
      );
  }
}

/** The input EventBridge hands the target: the template with its placeholders filled from `event`. */
export function renderInputTransformer(
  spec: InputTransformerSpec,
  event: Record<string, unknown>,
  context: DeliveryContext,
  where: string,
): string {
  checkInputTransformer(spec, where);
  const kind = kindOf(spec.InputTemplate, where);
  const { detail: _detail, 'detail-type': detailType, ...envelope } = event;
  const predefined: Record<string, unknown> = {
    'aws.events.rule-arn': context.ruleArn,
    'aws.events.rule-name': context.ruleName,
    'aws.events.event.ingestion-time': context.ingestionTime,
    'aws.events.event': { ...envelope, detailType },
    'aws.events.event.json': event,
  };
  const paths = spec.InputPathsMap ?? {};
  const rendered = segments(spec.InputTemplate)
    .map((segment) => {
      if (segment.placeholder === undefined) return segment.text;
      const name = segment.placeholder;
      const value =
        name in paths
          ? readJsonPath(event, paths[name]!, `${where}: InputPathsMap.${name}`)
          : predefined[name];
      return segment.quoted ? inString(value) : asJsonValue(value);
    })
    .join('');
  if (kind === 'string') return rendered;
  try {
    return JSON.stringify(JSON.parse(rendered));
  } catch {
    throw new InputTransformerError(
      `${where}: the filled InputTemplate is not JSON (EventBridge does not escape values): ${rendered.slice(0, 200)}`,
    );
  }
}

function inString(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value).replace(/"/g, '');
  return String(value);
}

function asJsonValue(value: unknown): string {
  if (value === undefined) return '""';
  if (typeof value === 'string') return `"${value}"`;
  return JSON.stringify(value);
}
