// Lambda and EventBridge Scheduler for a locally deployed stack, on one 127.0.0.1 server: Invoke
// (RequestResponse and Event), GetFunctionUrlConfig, the function URLs themselves (AWS_IAM auth:
// the SigV4 signature checked here, then the payload 2.0 event), and Scheduler's CreateSchedule /
// GetSchedule, whose one-time schedules fire when the test says time has come. Every request must
// be signed by a known identity; an operation it does not know is refused by name.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySigV4, type TestIdentity } from '../sigv4-identity.ts';
import { functionUrlEvent } from './function-url-event.ts';
import { runFunction, type InvocationResult, type LocalFunction } from './functions.ts';

export interface Invocation {
  readonly function: string;
  readonly event: unknown;
  readonly how: 'RequestResponse' | 'Event' | 'FunctionUrl' | 'Schedule';
  readonly answer: InvocationResult;
}

export interface LocalSchedule {
  readonly name: string;
  readonly group: string;
  readonly expression: string;
  readonly target: { readonly Arn: string; readonly Input?: string };
}

export interface LambdaServiceOptions {
  readonly account: string;
  readonly region: string;
  /** Whose signatures hold (the people, and the functions' roles). */
  readonly identities: readonly TestIdentity[];
  /** The environment of the local components, given to every function. */
  readonly componentsEnv: Readonly<Record<string, string>>;
  /** The identity a function's role gives it. */
  readonly identityOf: (fn: LocalFunction) => TestIdentity;
  /** Called after every invocation (e.g. to hand on the events it put to the functions they target). */
  readonly afterEach?: () => void;
}

export class LocalLambdaService {
  readonly invocations: Invocation[] = [];
  readonly schedules: LocalSchedule[] = [];
  private functions: LocalFunction[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private server?: Server;
  private base = '';

  constructor(private readonly options: LambdaServiceOptions) {}

  /** The endpoint for AWS_ENDPOINT_URL_LAMBDA and AWS_ENDPOINT_URL_SCHEDULER. */
  get endpoint(): string {
    return this.base;
  }

  /** Where function URLs answer: `<base>/<function>/<qualifier>/`. */
  get functionUrlBase(): string {
    return `${this.base}/url`;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.answer(request, Buffer.concat(chunks).toString('utf8'), response).catch((error: unknown) =>
          send(response, 500, { __type: 'ServiceException', message: String(error) }),
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The functions of the deployed template (set once the template is resolved). */
  deploy(functions: readonly LocalFunction[]): void {
    this.functions = [...functions];
  }

  /** The functions of the deployed template. */
  get deployed(): readonly LocalFunction[] {
    return this.functions;
  }

  byName(nameOrArn: string): LocalFunction {
    const name = nameOrArn.startsWith('arn:') ? nameOrArn.split(':')[6]! : nameOrArn.split(':')[0]!;
    const fn = this.functions.find((candidate) => candidate.name === name);
    if (!fn) throw new Error(`Function not found: ${nameOrArn}`);
    return fn;
  }

  /** Invokes and waits for the answer. */
  invoke(
    fn: LocalFunction,
    event: unknown,
    how: Invocation['how'],
    invokedArn?: string,
  ): Promise<InvocationResult> {
    const run = runFunction(fn, event, {
      componentsEnv: this.options.componentsEnv,
      identity: this.options.identityOf(fn),
      invokedArn,
    }).then((answer) => {
      this.invocations.push({ function: fn.name, event, how, answer });
      this.options.afterEach?.();
      return answer;
    });
    this.running.add(run);
    void run.finally(() => this.running.delete(run)).catch(() => undefined);
    return run;
  }

  /** Resolves once no invocation is running, including those the running ones started. */
  async drained(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Fires the one-time schedules whose `at(…)` time is not after `now`, once each; returns their names. */
  async fireDue(now: Date): Promise<string[]> {
    const due = this.schedules.filter((schedule) => {
      const at = /^at\((.+)\)$/.exec(schedule.expression)?.[1];
      return at !== undefined && Date.parse(`${at}Z`) <= now.getTime();
    });
    for (const schedule of due) {
      this.schedules.splice(this.schedules.indexOf(schedule), 1);
      await this.invoke(
        this.byName(schedule.target.Arn),
        JSON.parse(schedule.target.Input ?? '{}'),
        'Schedule',
      );
    }
    return due.map((schedule) => schedule.name);
  }

  async stop(): Promise<void> {
    await this.drained();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async answer(request: IncomingMessage, body: string, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.base);
    const verified = verifySigV4(
      { method: request.method ?? 'GET', url: request.url ?? '/', headers: request.headers, body },
      this.options.identities,
      new Date(),
    );
    if ('error' in verified) return send(response, 403, { __type: verified.code, message: verified.error });
    if (verified.region !== this.options.region)
      return send(response, 403, {
        __type: 'InvalidSignatureException',
        message: `signed for ${verified.region}`,
      });
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);

    if (segments[0] === 'url' && verified.service === 'lambda') {
      const [, name = '', qualifier = '$LATEST'] = segments;
      const fn = this.byName(name);
      const event = functionUrlEvent(request, body, verified.identity, this.options.account);
      const answer = await this.invoke(fn, event, 'FunctionUrl', `${fn.arn}:${qualifier}`);
      if ('error' in answer) return send(response, 502, { Message: answer.error.errorMessage });
      const structured = answer.result as {
        statusCode: number;
        headers?: Record<string, string>;
        body?: string;
      };
      response.writeHead(structured.statusCode, structured.headers).end(structured.body ?? '');
      return;
    }
    if (verified.service === 'lambda' && segments[1] === 'functions') {
      const fn = this.byName(segments[2]!);
      const qualifier = url.searchParams.get('Qualifier');
      if (segments[0] === '2015-03-31' && segments[3] === 'invocations' && request.method === 'POST') {
        const type = String(request.headers['x-amz-invocation-type'] ?? 'RequestResponse');
        const event = body ? (JSON.parse(body) as unknown) : {};
        const invokedArn = qualifier ? `${fn.arn}:${qualifier}` : fn.arn;
        if (type === 'Event') {
          void this.invoke(fn, event, 'Event', invokedArn);
          response.writeHead(202).end();
          return;
        }
        const answer = await this.invoke(fn, event, 'RequestResponse', invokedArn);
        const headers = { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' };
        if ('error' in answer)
          response
            .writeHead(200, { ...headers, 'x-amz-function-error': 'Unhandled' })
            .end(JSON.stringify(answer.error));
        else response.writeHead(200, headers).end(JSON.stringify(answer.result));
        return;
      }
      if (segments[0] === '2021-10-31' && segments[3] === 'url' && request.method === 'GET' && qualifier)
        return send(response, 200, {
          FunctionUrl: `${this.functionUrlBase}/${fn.name}/${qualifier}/`,
          FunctionArn: `${fn.arn}:${qualifier}`,
          AuthType: 'AWS_IAM',
          CreationTime: new Date(0).toISOString(),
          LastModifiedTime: new Date(0).toISOString(),
        });
    }
    if (verified.service === 'scheduler' && segments[0] === 'schedules' && segments[1]) {
      const name = segments[1];
      if (request.method === 'POST') {
        const input = JSON.parse(body) as {
          GroupName?: string;
          ScheduleExpression: string;
          Target: LocalSchedule['target'];
        };
        const group = input.GroupName ?? 'default';
        if (this.schedules.some((s) => s.name === name && s.group === group))
          return send(response, 409, { message: `Schedule ${name} already exists.` }, 'ConflictException');
        this.schedules.push({ name, group, expression: input.ScheduleExpression, target: input.Target });
        return send(response, 200, { ScheduleArn: this.scheduleArn(group, name) });
      }
      if (request.method === 'GET') {
        const group = url.searchParams.get('groupName') ?? 'default';
        const found = this.schedules.find((s) => s.name === name && s.group === group);
        if (!found)
          return send(
            response,
            404,
            { message: `Schedule ${name} does not exist.` },
            'ResourceNotFoundException',
          );
        return send(response, 200, {
          Arn: this.scheduleArn(group, name),
          Name: name,
          GroupName: group,
          ScheduleExpression: found.expression,
          Target: found.target,
          State: 'ENABLED',
        });
      }
    }
    send(response, 400, {
      __type: 'UnknownOperationException',
      message: `the local Lambda/Scheduler stand-in does not answer ${request.method} ${url.pathname} (${verified.service})`,
    });
  }

  private scheduleArn(group: string, name: string): string {
    return `arn:aws:scheduler:${this.options.region}:${this.options.account}:schedule/${group}/${name}`;
  }
}

function send(response: ServerResponse, status: number, body: object, errorType?: string): void {
  response
    .writeHead(status, {
      'content-type': 'application/json',
      ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
    })
    .end(JSON.stringify(body));
}
