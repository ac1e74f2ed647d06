import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tableClient } from '../functions/core/store/table-client.ts';
import { stsCallerIdentity } from '../functions/core/aws/sts-caller-identity.ts';
import { handleStsRequest } from '../dev/sts-endpoint.ts';
import { TEST_IDENTITIES, type TestIdentity } from '../dev/sigv4-identity.ts';
import { parseGate } from '../functions/core/config/index.ts';
import { putGate } from '../functions/core/store/gates.ts';
import { gateHandler } from '../functions/gate/handler.ts';
import { proveIdentity } from '../bin/commands/signed-gate-request.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
const ddb = JSON.parse(readFileSync('/tmp/redteam/ddb.json', 'utf8'));
export const db = tableClient(new DynamoDBClient({ endpoint: ddb.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }), 'sluice');

const ACCOUNT = '123456789012';
export const role = (name: string, session: string, key: string): TestIdentity => ({
  accessKeyId: `ASIA${key.padEnd(16, '0').toUpperCase()}`,
  secretAccessKey: `${session}/secret/EXAMPLEKEY/${key}`.padEnd(40, '0'),
  sessionToken: `session-token-of-${name}-${session}`,
  arn: `arn:aws:sts::${ACCOUNT}:assumed-role/${name}/${session}`,
});
export const IDS = {
  ...TEST_IDENTITIES,
  // same SSO user, second permission set
  aliceAdmin: role('AWSReservedSSO_AdministratorAccess_fedcba9876543210', 'alice@example.com', 'aliceadm'),
  // a role someone created with the SSO prefix (not under /aws-reserved/)
  fakeSsoAlice: role('AWSReservedSSO_Fake', 'alice@example.com', 'fakealice'),
  fakeSsoBob: role('AWSReservedSSO_Fake', 'bob@example.com', 'fakebob'),
};

export async function startSts(): Promise<{ endpoint: string; close: () => void; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => { seen.push(req.url ?? ''); handleStsRequest(req, res, Object.values(IDS)); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const endpoint = `http://127.0.0.1:${port}`;
  process.env.AWS_ENDPOINT_URL_STS = endpoint;
  return { endpoint, close: () => server.close(), seen };
}

export function clock(start: string) {
  let now = new Date(start);
  return { now: () => new Date(now), set: (iso: string) => { now = new Date(iso); }, advance: (ms: number) => { now = new Date(now.getTime() + ms); } };
}

export const FN = 'arn:aws:lambda:us-east-1:123456789012:function:sluice-gate';
export const entry = (action: string, gate: string) => `${FN}:${action}_${gate}`;

export async function newGate(spec: Record<string, unknown>) {
  const name = `rt-${randomUUID().slice(0, 8)}`;
  const gate = parseGate({ name, ...spec });
  await putGate(db, gate, new Date());
  return gate;
}

export function makeHandler(sts: { endpoint: string }, c: { now: () => Date }) {
  return gateHandler(() => ({ db, clock: c, sts: stsCallerIdentity(sts.endpoint) }));
}

export async function signed(who: keyof typeof IDS, request: Record<string, string>, functionArn = FN) {
  const id = IDS[who];
  const proof = await proveIdentity(request as never, functionArn, 'us-east-1', async () => ({
    accessKeyId: id.accessKeyId, secretAccessKey: id.secretAccessKey, ...(id.sessionToken && { sessionToken: id.sessionToken }),
  }));
  return { ...request, proof };
}

export const urlEvent = (body: unknown) => ({
  version: '2.0', rawPath: '/', requestContext: { http: { method: 'POST', path: '/' } },
  body: typeof body === 'string' ? body : JSON.stringify(body), isBase64Encoded: false,
});

export async function attempt<T>(label: string, f: () => Promise<T>): Promise<T | undefined> {
  try {
    const r = await f();
    const out = r as any;
    const brief = out?.statusCode ? `${out.statusCode} ${out.body?.slice(0, 300)}` : `${out?.outcome} ${out?.status?.state} ${out?.message?.slice(0, 300)}`;
    console.log(`[${label}] -> ${brief}`);
    return r;
  } catch (e) {
    console.log(`[${label}] THREW ${(e as Error).name}: ${(e as Error).message.slice(0, 300)}`);
    return undefined;
  }
}
