// An event that concerns several deliveries fans out: the reconcile function invokes itself
// asynchronously once per delivery, checked on the wire (Lambda Invoke, InvocationType Event); an
// event that concerns one is reconciled in the invocation that received it.
import { LambdaClient } from '@aws-sdk/client-lambda';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaReconcileNow } from '../../../functions/core/aws/reconcile-invocations.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { handler, reconcileHandler } from '../../../functions/reconcile/handler.ts';
import { startAwsRecorder } from '../../support/aws-recorder.ts';
import { engineDeps, pushFiles, registerDelivery } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();
const RECONCILE_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:sluice-reconcile';
const context = (id: string) => ({ awsRequestId: id, invokedFunctionArn: `${RECONCILE_ARN}:live` });
let recorder: Awaited<ReturnType<typeof startAwsRecorder>>;

beforeAll(async () => {
  recorder = await startAwsRecorder();
  process.env.AWS_ENDPOINT_URL_LAMBDA = recorder.url;
});
afterAll(async () => {
  await recorder.stop();
});

const pushEvent = (repository: string) => ({
  source: 'aws.ecr' as const,
  'detail-type': 'ECR Image Action' as const,
  account: '123456789012',
  region: 'us-east-1',
  detail: { 'action-type': 'PUSH', result: 'SUCCESS', 'repository-name': repository, 'image-tag': 'main' },
});

const configMap = (ns: string, name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  k: v\n`;

/** The async invocations the function sent since request `since`: the delivery each names. */
function invokedSince(since: number): string[] {
  const invokes = recorder.requests.slice(since).filter((r) => r.path.includes('/invocations'));
  for (const invoke of invokes) {
    expect(decodeURIComponent(invoke.path)).toBe(`/2015-03-31/functions/${RECONCILE_ARN}/invocations`);
    expect(invoke.headers['x-amz-invocation-type']).toBe('Event');
  }
  return invokes.map((invoke) => (JSON.parse(invoke.body) as { delivery: string }).delivery).sort();
}

describe('fan-out', () => {
  it('an ECR push matching three deliveries: one asynchronous invocation each, none reconciled here', async () => {
    const repository = uniqueName('fan/pushed');
    const names = [uniqueName('fan-a'), uniqueName('fan-b'), uniqueName('fan-c')].sort();
    const other = uniqueName('fan-other');
    for (const name of names) await registerDelivery(deps, bed, { name, repository });
    await registerDelivery(deps, bed, { name: other, repository: uniqueName('fan/unrelated') });
    const before = recorder.requests.length;

    const answer = await handler(pushEvent(repository), context('req-push'));

    expect(answer).toEqual({ invoked: expect.arrayContaining(names) });
    expect(invokedSince(before)).toEqual(names);
    for (const name of names) expect(await getStatus(deps.db, name)).toBeUndefined();
  });

  it('a gate that opened ({"gateOpened"}): one invocation per delivery using it', async () => {
    const gate = uniqueName('release');
    const names = [uniqueName('held-a'), uniqueName('held-b')].sort();
    for (const name of names)
      await registerDelivery(deps, bed, {
        name,
        repository: uniqueName('fan/held'),
        gates: [{ name: gate }],
      });
    const before = recorder.requests.length;

    expect(await handler({ gateOpened: gate }, context('req-gate'))).toEqual({
      invoked: expect.arrayContaining(names),
    });
    expect(invokedSince(before)).toEqual(names);
  });

  it('a push matching one delivery is reconciled in this invocation', async () => {
    const ns = uniqueName('fan');
    const [repository, name] = [uniqueName('fan/single'), uniqueName('single')];
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns, 'single') });
    await registerDelivery(deps, bed, { name, repository });
    const before = recorder.requests.length;

    const answer = await handler(pushEvent(repository), context('req-single'));

    expect(answer).toEqual([expect.objectContaining({ delivery: name, outcome: 'Succeeded' })]);
    expect(invokedSince(before)).toEqual([]);
  });

  it('deliveries Lambda would not take fail the event, named, so it is retried and then routed to the failure queue', async () => {
    const refused = uniqueName('refused');
    const lambda = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        if (body.includes(refused))
          response
            .writeHead(404, {
              'content-type': 'application/json',
              'x-amzn-errortype': 'ResourceNotFoundException',
            })
            .end(JSON.stringify({ Type: 'User', message: 'Function not found' }));
        else response.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => lambda.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(lambda.address() as AddressInfo).port}`;
      const repository = uniqueName('fan/refused');
      await registerDelivery(deps, bed, { name: uniqueName('taken'), repository });
      await registerDelivery(deps, bed, { name: refused, repository });
      const fanOut = reconcileHandler(() => ({
        ...deps,
        reconcileNow: lambdaReconcileNow(new LambdaClient({ endpoint, maxAttempts: 1 }), RECONCILE_ARN),
      }));
      await expect(fanOut(pushEvent(repository), context('req-refused'))).rejects.toThrow(
        new RegExp(
          `could not invoke ${RECONCILE_ARN} for 1 of 2 deliveries: ${refused} \\(Function not found\\)`,
        ),
      );
    } finally {
      await new Promise((resolve) => lambda.close(resolve));
    }
  });
});
