// The EventBridge rules of a synthesized CloudFormation template, as the EventBridge stand-in
// routes by them: each AWS::Events::Rule with an EventPattern, its bus, state and targets, with
// the Refs and Fn::GetAtts the template uses resolved to stable local names and ARNs
// (`<stack>-<logical id>`, as CloudFormation names what the template does not name).
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { compileEventPattern, EventPatternError, type EventMatcher } from './event-pattern.ts';
import { checkInputTransformer, readJsonPath, type InputTransformerSpec } from './input-transformer.ts';

/** Where the stand-in is: the account and region its ARNs and events carry. */
export interface StandInPlace {
  readonly region: string;
  readonly account: string;
}

export type TargetInput =
  | { readonly kind: 'event' }
  | { readonly kind: 'constant'; readonly text: string }
  | { readonly kind: 'path'; readonly path: string }
  | { readonly kind: 'transformer'; readonly spec: InputTransformerSpec };

export interface StandInTarget {
  readonly id: string;
  readonly arn: string;
  readonly input: TargetInput;
}

export interface StandInRule {
  readonly stack: string;
  readonly logicalId: string;
  readonly name: string;
  readonly arn: string;
  readonly busName: string;
  readonly enabled: boolean;
  readonly matches: EventMatcher;
  readonly targets: readonly StandInTarget[];
}

/** A template the stand-in cannot route by, naming the stack, the resource and what is wrong. */
export class EventRulesError extends Error {}

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}
interface TemplateJson {
  readonly Resources?: Record<string, Resource>;
}

const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;

/** The name CloudFormation would give a resource the template does not name (less its random suffix). */
export const physicalName = (stack: string, logicalId: string) => `${stack}-${logicalId}`;

/** Resolves the intrinsic functions a CDK template uses in rules, to the stand-in's local names. */
function resolver(stack: string, template: TemplateJson, place: StandInPlace) {
  const resources = template.Resources ?? {};
  const named = (id: string, prop: string): string => {
    const resource = resources[id]!;
    const name = resource.Properties?.[prop];
    return name === undefined ? physicalName(stack, id) : resolve(name, `${id}.${prop}`);
  };
  const arn = (service: string, resource: string) =>
    `arn:aws:${service}:${place.region}:${place.account}:${resource}`;
  const refs: Record<string, (id: string) => string> = {
    'AWS::SNS::Topic': (id) => arn('sns', named(id, 'TopicName')),
    'AWS::Events::EventBus': (id) => named(id, 'Name'),
    'AWS::Lambda::Function': (id) => named(id, 'FunctionName'),
    'AWS::SQS::Queue': (id) =>
      `https://sqs.${place.region}.amazonaws.com/${place.account}/${named(id, 'QueueName')}`,
    'AWS::IAM::Role': (id) => named(id, 'RoleName'),
    // An alias's Ref is its ARN: the function's, qualified by the alias name.
    'AWS::Lambda::Alias': (id) => {
      const props = resources[id]!.Properties ?? {};
      const fn = resolve(props.FunctionName, `${id}.FunctionName`);
      const base = fn.startsWith('arn:') ? fn : arn('lambda', `function:${fn}`);
      return `${base}:${resolve(props.Name, `${id}.Name`)}`;
    },
  };
  const attributes: Record<string, Record<string, (id: string) => string>> = {
    'AWS::SNS::Topic': { TopicArn: refs['AWS::SNS::Topic']!, TopicName: (id) => named(id, 'TopicName') },
    'AWS::Events::EventBus': {
      Name: (id) => named(id, 'Name'),
      Arn: (id) => arn('events', `event-bus/${named(id, 'Name')}`),
    },
    'AWS::Lambda::Function': { Arn: (id) => arn('lambda', `function:${named(id, 'FunctionName')}`) },
    'AWS::SQS::Queue': {
      Arn: (id) => arn('sqs', named(id, 'QueueName')),
      QueueName: (id) => named(id, 'QueueName'),
    },
    'AWS::IAM::Role': { Arn: (id) => `arn:aws:iam::${place.account}:role/${named(id, 'RoleName')}` },
  };
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': place.region,
    'AWS::AccountId': place.account,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': stack,
  };
  function resolve(value: unknown, where: string): string {
    if (typeof value === 'string') return value;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const [fn, args] = Object.entries(value)[0] ?? [];
      if (Object.keys(value).length === 1 && fn === 'Ref' && typeof args === 'string') {
        if (args in pseudo) return pseudo[args]!;
        const type = resources[args]?.Type;
        const ref = type ? refs[type] : undefined;
        if (ref) return ref(args);
        throw new EventRulesError(
          `${where}: the stand-in cannot resolve Ref ${args} (${type ?? 'no such resource'})`,
        );
      }
      if (Object.keys(value).length === 1 && fn === 'Fn::GetAtt' && Array.isArray(args)) {
        const [id, attribute] = args as [string, string];
        const type = resources[id]?.Type;
        const get = type ? attributes[type]?.[attribute] : undefined;
        if (get) return get(id);
        throw new EventRulesError(
          `${where}: the stand-in cannot resolve Fn::GetAtt ${id}.${attribute} (${type ?? 'no such resource'})`,
        );
      }
      if (
        Object.keys(value).length === 1 &&
        fn === 'Fn::Join' &&
        Array.isArray(args) &&
        Array.isArray(args[1])
      ) {
        const [separator, parts] = args as [string, unknown[]];
        return parts.map((part, i) => resolve(part, `${where}[${i}]`)).join(separator);
      }
    }
    throw new EventRulesError(
      `${where}: the stand-in does not resolve ${JSON.stringify(value).slice(0, 120)}`,
    );
  }
  /** Resolves every intrinsic inside a JSON value (an event pattern's strings). */
  function resolveDeep(value: unknown, where: string): unknown {
    if (Array.isArray(value)) return value.map((v, i) => resolveDeep(v, `${where}[${i}]`));
    if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      if (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::')))
        return resolve(value, where);
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveDeep(v, `${where}.${k}`)]));
    }
    return value;
  }
  return { resolve, resolveDeep };
}

/** The rules of `template` (stack `stack`) with an event pattern; throws EventRulesError on anything it cannot route by. */
export function rulesOfTemplate(stack: string, template: unknown, place: StandInPlace): StandInRule[] {
  if (!STACK_NAME.test(stack)) throw new EventRulesError(`'${stack}' is not a CloudFormation stack name`);
  if (typeof template !== 'object' || template === null)
    throw new EventRulesError(`stack ${stack}: the template is not a JSON object`);
  const json = template as TemplateJson;
  const { resolve, resolveDeep } = resolver(stack, json, place);
  return Object.entries(json.Resources ?? {})
    .filter(([, resource]) => resource.Type === 'AWS::Events::Rule' && resource.Properties?.EventPattern)
    .map(([logicalId, resource]) => {
      const where = `stack ${stack}, rule ${logicalId}`;
      const props = resource.Properties!;
      const busName =
        props.EventBusName === undefined
          ? 'default'
          : busNameOf(resolve(props.EventBusName, `${where}: EventBusName`));
      const name =
        props.Name === undefined
          ? physicalName(stack, logicalId).slice(0, 64)
          : resolve(props.Name, `${where}: Name`);
      const state = props.State === undefined ? 'ENABLED' : resolve(props.State, `${where}: State`);
      if (!['ENABLED', 'DISABLED', 'ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS'].includes(state))
        throw new EventRulesError(`${where}: State '${state}' is not ENABLED or DISABLED`);
      let matches: EventMatcher;
      try {
        matches = compileEventPattern(resolveDeep(props.EventPattern, `${where}: EventPattern`));
      } catch (error) {
        if (error instanceof EventPatternError)
          throw new EventRulesError(`${where}: EventPattern ${error.message}`);
        throw error;
      }
      const targets = ((props.Targets ?? []) as Record<string, unknown>[]).map((target, i) =>
        targetOf(target, `${where}, target ${String(target.Id ?? i)}`, resolve),
      );
      return {
        stack,
        logicalId,
        name,
        arn: `arn:aws:events:${place.region}:${place.account}:rule/${busName === 'default' ? '' : `${busName}/`}${name}`,
        busName,
        enabled: state !== 'DISABLED',
        matches,
        targets,
      };
    });
}

/** The bus names a template declares (AWS::Events::EventBus), as the stand-in names them. */
export function busesOfTemplate(stack: string, template: unknown, place: StandInPlace): string[] {
  const json = template as TemplateJson;
  const { resolve } = resolver(stack, json, place);
  return Object.entries(json.Resources ?? {})
    .filter(([, resource]) => resource.Type === 'AWS::Events::EventBus')
    .map(([id]) => resolve({ Ref: id }, `stack ${stack}, bus ${id}`));
}

/** A bus name, from a name or an event bus ARN. */
export function busNameOf(nameOrArn: string): string {
  const arn = /^arn:aws[a-z-]*:events:[^:]*:\d{12}:event-bus\/(.+)$/.exec(nameOrArn);
  return arn ? arn[1]! : nameOrArn;
}

function targetOf(
  target: Record<string, unknown>,
  where: string,
  resolve: (value: unknown, where: string) => string,
): StandInTarget {
  const id = resolve(target.Id, `${where}: Id`);
  const arn = resolve(target.Arn, `${where}: Arn`);
  const given = ['Input', 'InputPath', 'InputTransformer'].filter((key) => target[key] !== undefined);
  if (given.length > 1)
    throw new EventRulesError(`${where}: only one of Input, InputPath, or InputTransformer may be given`);
  let input: TargetInput = { kind: 'event' };
  try {
    if (target.Input !== undefined)
      input = { kind: 'constant', text: resolve(target.Input, `${where}: Input`) };
    if (target.InputPath !== undefined) {
      const path = resolve(target.InputPath, `${where}: InputPath`);
      readJsonPath({}, path, `${where}: InputPath`);
      input = { kind: 'path', path };
    }
    if (target.InputTransformer !== undefined) {
      const raw = target.InputTransformer as Record<string, unknown>;
      const paths = (raw.InputPathsMap ?? {}) as Record<string, unknown>;
      const spec: InputTransformerSpec = {
        InputPathsMap: Object.fromEntries(
          Object.entries(paths).map(([key, path]) => [key, resolve(path, `${where}: InputPathsMap.${key}`)]),
        ),
        InputTemplate: resolve(raw.InputTemplate, `${where}: InputTemplate`),
      };
      checkInputTransformer(spec, where);
      input = { kind: 'transformer', spec };
    }
  } catch (error) {
    if (error instanceof EventRulesError) throw error;
    throw new EventRulesError((error as Error).message);
  }
  return { id, arn, input };
}

/**
 * Loads a synthesized template's rules into the stand-in whose rules folder is `rulesDir`: checks
 * them (throws EventRulesError naming the rule and field, writing nothing), then writes the
 * template as `<stack>.json` whole (renamed into place, so the stand-in never reads half of it).
 * Another template for the same stack replaces it.
 */
export function writeEventRules(rulesDir: string, stack: string, template: unknown): void {
  rulesOfTemplate(stack, template, { region: 'us-east-1', account: '000000000000' });
  mkdirSync(rulesDir, { recursive: true });
  const file = join(rulesDir, `${stack}.json`);
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(template));
  renameSync(`${file}.${process.pid}.tmp`, file);
}

/** Every stack's rules in `rulesDir`, and the buses they declare or route on (plus `default`). */
export function readEventRules(
  rulesDir: string,
  place: StandInPlace,
): { readonly rules: StandInRule[]; readonly buses: Set<string> } {
  const rules: StandInRule[] = [];
  const buses = new Set(['default']);
  if (!existsSync(rulesDir)) return { rules, buses };
  for (const file of readdirSync(rulesDir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const stack = file.slice(0, -'.json'.length);
    const template: unknown = JSON.parse(readFileSync(join(rulesDir, file), 'utf8'));
    for (const rule of rulesOfTemplate(stack, template, place)) {
      rules.push(rule);
      buses.add(rule.busName);
    }
    for (const bus of busesOfTemplate(stack, template, place)) buses.add(bus);
  }
  return { rules, buses };
}

/** The ARN (or, for a bus, the name) the stand-in gives `logicalId` of `stack`'s template: what `messages` takes for a topic. */
export function standInRef(stack: string, template: unknown, logicalId: string, place: StandInPlace): string {
  return resolver(stack, template as TemplateJson, place).resolve({ Ref: logicalId }, `stack ${stack}`);
}
