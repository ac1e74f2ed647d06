import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { kubeConfigFor } from '../../functions/core/kube/connection.ts';
import { componentsEnv, type Components } from './components.ts';

/**
 * The running local components, for a test file. Points this worker's AWS SDK at them through
 * the standard AWS_ENDPOINT_URL_* variables, exactly as `. .sluice/dev/env` does for a user.
 */
export function testbed(): Components & { kubeConfig: () => KubeConfig; dynamoDb: () => DynamoDBClient } {
  const components = inject('components');
  Object.assign(process.env, componentsEnv(components));
  return {
    ...components,
    kubeConfig: () =>
      kubeConfigFor({
        server: components.kube.server,
        caData: components.kube.caData,
        token: components.kube.token,
      }),
    dynamoDb: () => new DynamoDBClient({}),
  };
}

/** A name no other test uses, for namespaces, repositories and deliveries (files run in parallel). */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

export async function createNamespace(kc: KubeConfig, name: string): Promise<void> {
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
}
