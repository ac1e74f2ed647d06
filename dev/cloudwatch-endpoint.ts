import { createServer, type Server } from 'node:http';
import { jsonProtocol } from './aws-json.ts';
import type { TestIdentity } from './sigv4-identity.ts';

/** The JSON 1.0 target prefix of CloudWatch (`GraniteServiceVersion20100801.DescribeAlarms`). */
const TARGET_PREFIX = 'GraniteServiceVersion20100801.';
const STATES = ['OK', 'ALARM', 'INSUFFICIENT_DATA'];

class CloudWatchError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

interface StoredAlarm {
  readonly name: string;
  readonly arn: string;
  state: string;
  reason: string;
  updated: Date;
  readonly input: Record<string, unknown>;
}

/**
 * A small in-memory CloudWatch for alarm gates, over the wire protocol `@aws-sdk/client-cloudwatch`
 * speaks (JSON 1.0): `PutMetricAlarm` (a new alarm starts in INSUFFICIENT_DATA, as in AWS),
 * `SetAlarmState` (how tests move an alarm, as one may in AWS), `DescribeAlarms` (by name, metric
 * alarms) and `DeleteAlarms`. No metric is ever evaluated, so a state changes only when set, and
 * no state-change event is sent (tests hand the reconcile function the event AWS documents).
 * Request signatures are not checked; the signing key only says whose account's alarms are meant.
 */
export function createCloudWatchEndpoint(options: {
  region: string;
  /** The account of a caller whose key is not among `identities`. */
  account: string;
  /** Callers whose key pair names their account: each account sees its own alarms, as in AWS. */
  identities?: readonly TestIdentity[];
}): Server {
  const accounts = new Map<string, Map<string, StoredAlarm>>();
  let account = options.account;
  const arnOf = (name: string) => `arn:aws:cloudwatch:${options.region}:${account}:alarm:${name}`;
  const names = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);
  let alarms = new Map<string, StoredAlarm>();
  const handlers: Record<string, (input: Record<string, unknown>) => unknown> = {
    PutMetricAlarm(input) {
      const name = String(input.AlarmName ?? '');
      if (!name || name.length > 255)
        throw new CloudWatchError('ValidationError', 'AlarmName must be 1 to 255 characters');
      const existing = alarms.get(name);
      alarms.set(name, {
        name,
        arn: arnOf(name),
        state: existing?.state ?? 'INSUFFICIENT_DATA',
        reason: existing?.reason ?? 'Unchecked: Initial alarm creation',
        updated: existing?.updated ?? new Date(),
        input,
      });
      return {};
    },
    SetAlarmState(input) {
      const alarm = alarms.get(String(input.AlarmName));
      if (!alarm)
        throw new CloudWatchError('ResourceNotFound', `alarm ${String(input.AlarmName)} does not exist`);
      if (!STATES.includes(String(input.StateValue)))
        throw new CloudWatchError('InvalidParameterValue', `StateValue must be one of ${STATES.join(', ')}`);
      alarm.state = String(input.StateValue);
      alarm.reason = String(input.StateReason ?? '');
      alarm.updated = new Date();
      return {};
    },
    DescribeAlarms(input) {
      const wanted = names(input.AlarmNames);
      if (wanted.length > 100)
        throw new CloudWatchError('InvalidParameterValue', 'AlarmNames holds at most 100 names');
      const types = names(input.AlarmTypes);
      const metric = types.length === 0 || types.includes('MetricAlarm');
      const found = metric
        ? [...alarms.values()].filter((alarm) => wanted.length === 0 || wanted.includes(alarm.name))
        : [];
      return {
        MetricAlarms: found.map((alarm) => ({
          ...alarm.input,
          AlarmName: alarm.name,
          AlarmArn: alarm.arn,
          StateValue: alarm.state,
          StateReason: alarm.reason,
          StateUpdatedTimestamp: alarm.updated.getTime() / 1000,
        })),
        CompositeAlarms: [],
      };
    },
    DeleteAlarms(input) {
      for (const name of names(input.AlarmNames)) alarms.delete(name);
      return {};
    },
  };
  return createServer(
    jsonProtocol(TARGET_PREFIX, ({ body, target, operation, reply, http }) => {
      const handler = operation === undefined ? undefined : handlers[operation];
      account = callerAccount(http.headers.authorization, options.identities ?? []) ?? options.account;
      alarms = accounts.get(account) ?? accounts.set(account, new Map()).get(account)!;
      try {
        if (!handler)
          throw new CloudWatchError(
            'UnknownOperationException',
            `operation ${target || '(none)'} is not served locally`,
          );
        reply(200, handler(JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>));
      } catch (error) {
        const known = error instanceof CloudWatchError;
        const type = known ? error.type : 'InternalServiceError';
        reply(known ? 400 : 500, { __type: type, message: (error as Error).message }, type);
      }
    }),
  );
}

/** The account of the known identity whose access key signed the request (its Credential=…). */
function callerAccount(
  authorization: string | undefined,
  identities: readonly TestIdentity[],
): string | undefined {
  const key = /Credential=([^/]+)\//.exec(authorization ?? '')?.[1];
  const identity = identities.find((candidate) => candidate.accessKeyId === key);
  return identity ? /^arn:aws:(?:sts|iam)::(\d{12}):/.exec(identity.arn)?.[1] : undefined;
}

/** True for a request meant for CloudWatch (by its JSON 1.0 target). */
export const isCloudWatchRequest = (target: string | string[] | undefined): boolean =>
  String(target ?? '').startsWith(TARGET_PREFIX);
