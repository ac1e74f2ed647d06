// The reconcile Lambda handler, invoked as Lambda would invoke it, on the real components.
import { CoreV1Api } from '@kubernetes/client-node';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as lambdaHandler } from '../../../functions/reconcile/handler.ts';
import { engineDeps, pushFiles, registerDelivery, reconciledBy } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const handler = (...args: Parameters<typeof lambdaHandler>) => reconciledBy(lambdaHandler(...args));
const deps = engineDeps();
const context = { awsRequestId: 'req-1' } as Context;
const configMap = (ns: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pushed\n  namespace: ${ns}\ndata:\n  k: v\n`;

describe('reconcile handler', () => {
  it('reconciles the delivery named in {"delivery": name}', async () => {
    const ns = uniqueName('h');
    const repository = uniqueName('handler/named');
    const name = uniqueName('named');
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns) });
    await registerDelivery(deps, bed, { name, repository, prune: true });
    const [result] = await handler({ delivery: name }, context);
    expect(result).toMatchObject({ delivery: name, outcome: 'Succeeded' });
  });

  it('reconciles every delivery of the repository an ECR push event names, and no other', async () => {
    const ns = uniqueName('h');
    const repository = uniqueName('handler/pushed');
    const [first, second, other] = [uniqueName('push-a'), uniqueName('push-b'), uniqueName('other')];
    // Two deliveries of one repository, each into a namespace of its own (one object, one owner).
    const ns2 = uniqueName('h');
    await createNamespace(bed.kubeConfig(), ns);
    await createNamespace(bed.kubeConfig(), ns2);
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns) });
    await registerDelivery(deps, bed, { name: first, repository, prune: true });
    await registerDelivery(deps, bed, { name: second, repository, prune: false, targetNamespace: ns2 });
    await registerDelivery(deps, bed, { name: other, repository: uniqueName('handler/unrelated') });
    const results = await handler(
      {
        source: 'aws.ecr',
        'detail-type': 'ECR Image Action',
        account: '123456789012',
        region: 'us-east-1',
        detail: {
          'action-type': 'PUSH',
          result: 'SUCCESS',
          'repository-name': repository,
          'image-tag': 'main',
        },
      },
      context,
    );
    expect(results.map((r) => r.delivery).sort()).toEqual([first, second].sort());
    expect(results.map((r) => r.outcome)).toEqual(['Succeeded', 'Succeeded']);
    const cm = await bed
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'pushed', namespace: ns });
    expect(cm.data).toEqual({ k: 'v' });
  });

  it('refuses an event it does not understand, naming what it expected', async () => {
    await expect(handler({ hello: 'world' } as never, context)).rejects.toThrow(
      /expected \{"delivery":"<name>"\}, \{"gateOpened":"<gate>"\}, an ECR "ECR Image Action" or a "CloudWatch Alarm State Change" event/,
    );
  });
});
