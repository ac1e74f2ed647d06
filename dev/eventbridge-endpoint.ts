// A stand-in for EventBridge PutEvents (AWS JSON 1.1, `X-Amz-Target: AWSEvents.PutEvents`), as
// @aws-sdk/client-eventbridge speaks it, answering only a request whose Signature Version 4 holds
// for a known identity. It routes each event by the rules of the synthesized templates in its
// rules folder (writeEventRules): the envelope EventBridge builds, each enabled rule of the bus
// whose pattern matches, each target's input (the event, Input, InputPath or InputTransformer) as
// the target would receive it. Deliveries are recorded per target ARN (an SNS topic's: the message
// body), and an event no rule matched is kept too; eventBridgeDeliveries reads them.
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { jsonProtocol } from './aws-json.ts';
import { busNameOf, readEventRules, type StandInRule, type StandInTarget } from './event-rules.ts';
import { readJsonPath, renderInputTransformer } from './input-transformer.ts';
import { verifySigV4, type TestIdentity } from './sigv4-identity.ts';

const TARGET_PREFIX = 'AWSEvents.';
const MAX_ENTRIES = 10;
const MAX_ENTRY_BYTES = 256 * 1024;

export interface EventBridgeEndpointOptions {
  /** The templates whose rules route events (writeEventRules), read on every request. */
  readonly rulesDir: string;
  /** Where deliveries and unmatched events are recorded (eventBridgeDeliveries reads them). */
  readonly deliveriesDir: string;
  readonly identities: readonly TestIdentity[];
  readonly region: string;
  readonly account: string;
}

/** The event EventBridge builds from a PutEvents entry. */
export interface StandInEvent {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: Record<string, unknown>;
}

/** One event handed to one target: its input as the target receives it, or why it could not be made. */
export interface Delivery {
  readonly targetArn: string;
  readonly rule: string;
  readonly ruleArn: string;
  readonly eventId: string;
  /** For an SNS topic, the message body. */
  readonly body?: string;
  /** The stand-in could not make the target's input (an InputTransformer it refuses to guess). */
  readonly error?: string;
}

/** True for a request of the EventBridge API (by its target header). */
export function isEventBridgeRequest(target: string | string[] | undefined): boolean {
  return String(target ?? '').startsWith(TARGET_PREFIX);
}

/** The PutEvents request listener. */
export function eventBridgeHandler(
  options: EventBridgeEndpointOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  return jsonProtocol(TARGET_PREFIX, (request) => {
    const verified = verifySigV4(
      { ...request.http, body: request.body.toString('utf8') },
      options.identities,
      new Date(),
    );
    if ('error' in verified) return request.reply(403, { message: verified.error }, verified.code);
    if (verified.service !== 'events')
      return request.reply(
        403,
        { message: `signed for ${verified.service}, not events` },
        'SignatureDoesNotMatch',
      );
    if (request.operation !== 'PutEvents')
      return request.reply(
        400,
        { message: `the EventBridge stand-in answers PutEvents only, not ${request.target}` },
        'UnknownOperationException',
      );
    let input: { Entries?: unknown };
    try {
      input = JSON.parse(request.body.toString('utf8')) as { Entries?: unknown };
    } catch {
      return request.reply(400, { message: 'the request body is not JSON' }, 'SerializationException');
    }
    const entries = input.Entries;
    if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_ENTRIES)
      return request.reply(
        400,
        {
          message: `1 validation error detected: Value at 'entries' must have length between 1 and ${MAX_ENTRIES}`,
        },
        'ValidationException',
      );
    let routing: ReturnType<typeof readEventRules>;
    try {
      routing = readEventRules(options.rulesDir, options);
    } catch (error) {
      return request.reply(
        500,
        { message: `the stand-in's rules: ${(error as Error).message}` },
        'InternalException',
      );
    }
    const results = entries.map((entry: unknown) =>
      putEntry(options, routing, entry as Record<string, unknown>),
    );
    request.reply(200, {
      FailedEntryCount: results.filter((result) => 'ErrorCode' in result).length,
      Entries: results,
    });
  });
}

type EntryResult = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

function putEntry(
  options: EventBridgeEndpointOptions,
  routing: ReturnType<typeof readEventRules>,
  entry: Record<string, unknown>,
): EntryResult {
  const { Source, DetailType, Detail } = entry;
  if (
    typeof Source !== 'string' ||
    typeof DetailType !== 'string' ||
    typeof Detail !== 'string' ||
    !Source ||
    !DetailType
  )
    return {
      ErrorCode: 'InvalidArgument',
      ErrorMessage: 'Parameter(s) Source, DetailType, Detail must be specified.',
    };
  if (Buffer.byteLength(JSON.stringify(entry)) > MAX_ENTRY_BYTES)
    return { ErrorCode: 'InvalidArgument', ErrorMessage: 'The entry is larger than 256 KB.' };
  let detail: unknown;
  try {
    detail = JSON.parse(Detail);
  } catch {
    detail = undefined;
  }
  if (typeof detail !== 'object' || detail === null || Array.isArray(detail))
    return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
  const busName = busNameOf(
    typeof entry.EventBusName === 'string' && entry.EventBusName ? entry.EventBusName : 'default',
  );
  if (!routing.buses.has(busName))
    return { ErrorCode: 'NotFoundException', ErrorMessage: `Event bus ${busName} does not exist.` };
  const resources = entry.Resources ?? [];
  if (!Array.isArray(resources) || !resources.every((r) => typeof r === 'string'))
    return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Resources must be a list of strings.' };
  const time = eventTime(entry.Time);
  if (time === undefined) return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Time is not a timestamp.' };
  const event: StandInEvent = {
    version: '0',
    id: randomUUID(),
    'detail-type': DetailType,
    source: Source,
    account: options.account,
    time,
    region: options.region,
    resources,
    detail: detail as Record<string, unknown>,
  };
  const ingestionTime = new Date().toISOString();
  const matched = routing.rules.filter(
    (rule) => rule.busName === busName && rule.enabled && rule.matches(event),
  );
  mkdirSync(options.deliveriesDir, { recursive: true });
  if (matched.length === 0)
    appendFileSync(join(options.deliveriesDir, UNMATCHED), `${JSON.stringify({ busName, event })}\n`);
  for (const rule of matched)
    for (const target of rule.targets)
      appendFileSync(
        join(options.deliveriesDir, DELIVERIES),
        `${JSON.stringify(deliver(rule, target, event, ingestionTime))}\n`,
      );
  return { EventId: event.id };
}

/** EventBridge's `time`: the entry's Time (epoch seconds, as the SDK sends it) or now, to the second. */
function eventTime(value: unknown): string | undefined {
  const date =
    value === undefined || value === null
      ? new Date()
      : typeof value === 'number'
        ? new Date(value * 1000)
        : typeof value === 'string'
          ? new Date(/^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : value)
          : new Date(NaN);
  if (Number.isNaN(date.getTime())) return undefined;
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function deliver(
  rule: StandInRule,
  target: StandInTarget,
  event: StandInEvent,
  ingestionTime: string,
): Delivery {
  const base = { targetArn: target.arn, rule: rule.name, ruleArn: rule.arn, eventId: event.id };
  const where = `rule ${rule.name} (stack ${rule.stack}), target ${target.id}`;
  try {
    const input = target.input;
    const body =
      input.kind === 'event'
        ? JSON.stringify(event)
        : input.kind === 'constant'
          ? input.text
          : input.kind === 'path'
            ? JSON.stringify(readJsonPath(event, input.path, `${where}: InputPath`) ?? null)
            : renderInputTransformer(
                input.spec,
                event as unknown as Record<string, unknown>,
                { ruleArn: rule.arn, ruleName: rule.name, ingestionTime },
                where,
              );
    return { ...base, body };
  } catch (error) {
    return { ...base, error: (error as Error).message };
  }
}

const DELIVERIES = 'deliveries.jsonl';
const UNMATCHED = 'unmatched.jsonl';

const readLines = <T>(file: string): T[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as T)
    : [];

/** What the stand-in recorded in `deliveriesDir`, read afresh on every call. */
export function eventBridgeDeliveries(deliveriesDir: string) {
  const all = () => readLines<Delivery>(join(deliveriesDir, DELIVERIES));
  return {
    /** Every delivery to `targetArn`, in order (failed ones with `error`). */
    deliveries: (targetArn: string): Delivery[] => all().filter((d) => d.targetArn === targetArn),
    /**
     * The message bodies delivered to `targetArn` (an SNS topic: what subscribers are sent), in
     * order. A delivery the stand-in could not make is an error here, naming the rule and target.
     */
    messages(targetArn: string): string[] {
      return all()
        .filter((d) => d.targetArn === targetArn)
        .map((d) => {
          if (d.error !== undefined) throw new Error(`EventBridge stand-in: ${d.error}`);
          return d.body!;
        });
    },
    /** Events that matched no rule of their bus, with the bus. */
    unmatched: (): { busName: string; event: StandInEvent }[] =>
      readLines<{ busName: string; event: StandInEvent }>(join(deliveriesDir, UNMATCHED)),
  };
}
