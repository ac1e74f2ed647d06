import { afterAll, beforeAll } from 'vitest';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One HTTP request as an AWS SDK client sent it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * Records the requests AWS SDK clients send to Lambda (`Invoke`), EventBridge Scheduler
 * (`CreateSchedule`, `GetSchedule`) and EventBridge (`PutEvents`) and answers as those services
 * do, so the wire format of the calls the gate function makes can be checked locally (there is no
 * local Lambda or Scheduler to call). As Scheduler, it holds each schedule created, by group and
 * name: a second CreateSchedule of a name its group holds fails with ConflictException (409), and
 * GetSchedule returns what was created, or ResourceNotFoundException (404). It does not check
 * expressions, fire schedules or delete them after they fire.
 */
export async function startAwsRecorder(
  options: { readonly functionUrl?: (qualifier: string) => string } = {},
): Promise<{
  readonly url: string;
  readonly requests: RecordedRequest[];
  stop(): Promise<void>;
}> {
  const requests: RecordedRequest[] = [];
  const schedules = new Map<string, Record<string, unknown>>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      requests.push({
        method: request.method ?? 'GET',
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const urlConfig = /^\/2021-10-31\/functions\/([^/]+)\/url\?Qualifier=([^&]+)/.exec(path);
      if (urlConfig && options.functionUrl) {
        const [, name, qualifier] = urlConfig.map((part) => decodeURIComponent(part));
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            FunctionUrl: options.functionUrl(qualifier!),
            FunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${name}:${qualifier}`,
            AuthType: 'AWS_IAM',
            CreationTime: '2026-01-01T00:00:00.000Z',
            LastModifiedTime: '2026-01-01T00:00:00.000Z',
          }),
        );
      } else if (/^\/2015-03-31\/functions\/[^/]+\/invocations/.test(path)) {
        response.writeHead(202, { 'content-type': 'application/json' }).end();
      } else if (path.startsWith('/schedules/')) {
        answerScheduler(
          schedules,
          request.method ?? 'GET',
          path,
          Buffer.concat(chunks).toString('utf8'),
          response,
        );
      } else if (request.headers['x-amz-target'] === 'AWSEvents.PutEvents') {
        response
          .writeHead(200, { 'content-type': 'application/x-amz-json-1.1' })
          .end(JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: String(requests.length) }] }));
      } else {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not recorded"}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Scheduler's REST API for the schedules it holds (`group/name` → the CreateSchedule body). */
function answerScheduler(
  schedules: Map<string, Record<string, unknown>>,
  method: string,
  path: string,
  body: string,
  response: ServerResponse,
): void {
  const [rawName = '', query = ''] = path.slice('/schedules/'.length).split('?');
  const name = decodeURIComponent(rawName);
  const json = (status: number, value: unknown, errorType?: string) =>
    response
      .writeHead(status, {
        'content-type': 'application/json',
        ...(errorType && { 'x-amzn-errortype': errorType }),
      })
      .end(JSON.stringify(value));
  const arnOf = (group: string) => `arn:aws:scheduler:us-east-1:000000000000:schedule/${group}/${name}`;
  if (method === 'GET') {
    const group = new URLSearchParams(query).get('groupName') ?? 'default';
    const held = schedules.get(`${group}/${name}`);
    if (!held) json(404, { Message: `Schedule ${name} does not exist.` }, 'ResourceNotFoundException');
    else json(200, { ...held, Arn: arnOf(group), Name: name, GroupName: group, State: 'ENABLED' });
    return;
  }
  const created = JSON.parse(body || '{}') as Record<string, unknown>;
  const group = typeof created.GroupName === 'string' ? created.GroupName : 'default';
  if (schedules.has(`${group}/${name}`)) {
    json(409, { Message: `Schedule ${name} already exists.` }, 'ConflictException');
    return;
  }
  const { ClientToken: _, ...held } = created;
  schedules.set(`${group}/${name}`, held);
  json(200, { ScheduleArn: arnOf(group) });
}

/**
 * The fields of a one-time CreateSchedule request sluice sends: at `minute` (UTC), deleted after it
 * fires, invoking `functionArn` as `roleArn` with `input`.
 */
export function oneTimeScheduleBody(
  minute: Date,
  target: { group: string; functionArn: string; roleArn: string; input: unknown; deadLetterArn: string },
): Record<string, unknown> {
  return {
    GroupName: target.group,
    ScheduleExpression: `at(${minute.toISOString().slice(0, 19)})`,
    ScheduleExpressionTimezone: 'UTC',
    ActionAfterCompletion: 'DELETE',
    FlexibleTimeWindow: { Mode: 'OFF' },
    Target: {
      Arn: target.functionArn,
      RoleArn: target.roleArn,
      Input: JSON.stringify(target.input),
      RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
      DeadLetterConfig: { Arn: target.deadLetterArn },
    },
  };
}

/**
 * For a test file of the spec function: a recorder standing in for Lambda, which the function is
 * told is where the reconcile function lives (started before the tests, stopped after), and the
 * asynchronous reconciles of one delivery it was asked for.
 */
export function recordReconcileInvocations(): {
  readonly invocationsOf: (delivery: string) => RecordedRequest[];
} {
  let recorder: Awaited<ReturnType<typeof startAwsRecorder>>;
  beforeAll(async () => {
    recorder = await startAwsRecorder();
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_LAMBDA: recorder.url,
      SLUICE_RECONCILE_FUNCTION: 'arn:aws:lambda:us-east-1:000000000000:function:sluice-reconcile',
    });
  });
  afterAll(async () => {
    await recorder.stop();
  });
  return {
    invocationsOf: (delivery) =>
      recorder.requests.filter(
        (r) => r.path.includes('/invocations') && r.body === JSON.stringify({ delivery }),
      ),
  };
}
