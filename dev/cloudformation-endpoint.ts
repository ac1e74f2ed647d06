// A stand-in for CloudFormation's DescribeStacks, the one call `sluice --stack` makes: the AWS query
// protocol (a form-encoded POST, an XML answer), as @aws-sdk/client-cloudformation speaks it.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { verifySigV4, type TestIdentity } from './sigv4-identity.ts';

/** One output of a stack, as DescribeStacks answers it. */
export interface StandInOutput {
  readonly OutputKey: string;
  readonly OutputValue: string;
  readonly Description?: string;
  readonly ExportName?: string;
}

/** A stack the stand-in knows: a file `<name>.json` in its stacks folder. */
export interface StandInStack {
  readonly outputs: readonly StandInOutput[];
  /** @default CREATE_COMPLETE */
  readonly status?: string;
}

const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;

/**
 * Records a stack in `stacksDir` (written whole, then renamed, so a reader never sees half of it).
 * This is how tests and `sluice dev up` "deploy": the stand-in has no templates or resources.
 */
export function writeStandInStack(stacksDir: string, name: string, stack: StandInStack): void {
  if (!STACK_NAME.test(name)) throw new Error(`stack name '${name}' is not a CloudFormation stack name`);
  mkdirSync(stacksDir, { recursive: true });
  const file = join(stacksDir, `${name}.json`);
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(stack, null, 2));
  renameSync(`${file}.${process.pid}.tmp`, file);
}

export interface CloudFormationEndpointOptions {
  /** Where the stacks are, one `<name>.json` (StandInStack) each; read on every request. */
  readonly stacksDir: string;
  /** Whose signatures hold (dev/sigv4-identity.ts). */
  readonly identities: readonly TestIdentity[];
  readonly region: string;
  readonly account: string;
}

/** True for a request signed for CloudFormation (by its credential scope): the query API has no target header. */
export function isCloudFormationRequest(request: IncomingMessage): boolean {
  return /\/cloudformation\/aws4_request/.test(String(request.headers.authorization ?? ''));
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
const element = (name: string, value: string | undefined) =>
  value === undefined ? '' : `<${name}>${escapeXml(value)}</${name}>`;
const NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

/**
 * DescribeStacks over the query protocol, answering only a request whose Signature Version 4 holds
 * for one of `identities`, signed for `cloudformation`: one stack by name or stack id (a
 * ValidationError "Stack with id … does not exist" otherwise, as CloudFormation says it), or every
 * stack. Any other action is refused. It evaluates no IAM policy.
 */
export function handleCloudFormationRequest(
  options: CloudFormationEndpointOptions,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const requestId = randomUUID();
    const reply = (status: number, xml: string) =>
      response.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId }).end(xml);
    const fail = (status: number, code: string, message: string) =>
      reply(
        status,
        `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
      );
    const verified = verifySigV4(
      { method: request.method ?? 'POST', url: request.url ?? '/', headers: request.headers, body },
      options.identities,
      new Date(),
    );
    if ('error' in verified) return fail(403, verified.code, verified.error);
    if (verified.service !== 'cloudformation')
      return fail(403, 'SignatureDoesNotMatch', `signed for ${verified.service}, not cloudformation`);
    const params = new URLSearchParams(body);
    const action = params.get('Action');
    if (action !== 'DescribeStacks')
      return fail(
        400,
        'InvalidAction',
        `the CloudFormation stand-in answers DescribeStacks only, not ${action}`,
      );
    const wanted = params.get('StackName') ?? undefined;
    const stacks = listStacks(options);
    const found = wanted ? stacks.filter((stack) => stack.name === wanted || stack.id === wanted) : stacks;
    if (wanted && found.length === 0)
      return fail(400, 'ValidationError', `Stack with id ${wanted} does not exist`);
    const members = found
      .map(
        (stack) =>
          `<member>${element('StackId', stack.id)}${element('StackName', stack.name)}${element('CreationTime', stack.created)}${element('StackStatus', stack.status)}<Outputs>${stack.outputs
            .map(
              (output) =>
                `<member>${element('OutputKey', output.OutputKey)}${element('OutputValue', output.OutputValue)}${element('Description', output.Description)}${element('ExportName', output.ExportName)}</member>`,
            )
            .join('')}</Outputs></member>`,
      )
      .join('');
    reply(
      200,
      `<DescribeStacksResponse xmlns="${NS}"><DescribeStacksResult><Stacks>${members}</Stacks></DescribeStacksResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></DescribeStacksResponse>`,
    );
  });
}

interface Described {
  readonly name: string;
  readonly id: string;
  readonly created: string;
  readonly status: string;
  readonly outputs: readonly StandInOutput[];
}

function listStacks(options: CloudFormationEndpointOptions): Described[] {
  if (!existsSync(options.stacksDir)) return [];
  return readdirSync(options.stacksDir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const name = file.slice(0, -'.json'.length);
      const stack = JSON.parse(readFileSync(join(options.stacksDir, file), 'utf8')) as StandInStack;
      const hash = createHash('sha256').update(name).digest('hex');
      const uuid = `${hash.slice(0, 8)}-${hash.slice(8, 12)}-${hash.slice(12, 16)}-${hash.slice(16, 20)}-${hash.slice(20, 32)}`;
      return {
        name,
        id: `arn:aws:cloudformation:${options.region}:${options.account}:stack/${name}/${uuid}`,
        created: '2026-01-01T00:00:00.000Z',
        status: stack.status ?? 'CREATE_COMPLETE',
        outputs: stack.outputs,
      };
    });
}
