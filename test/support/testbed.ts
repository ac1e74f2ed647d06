import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { kubeConfigFor } from '../../functions/core/kube/connection.ts';
import { componentsEnv, type Components } from '../../dev/components.ts';

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

/**
 * A copy of the local cluster's kubeconfig at a path of its own. Deliveries naming it count as
 * another cluster when one of them is removed (removal keeps what other deliveries *on the same
 * cluster* apply, and fails when one of those cannot be built), so the deliveries other test files
 * register on the shared kubeconfig, some deliberately broken, play no part in this file's removals.
 */
export function kubeconfigCopy(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'sluice-kubeconfig-')), 'kubeconfig');
  copyFileSync(inject('components').kube.kubeconfig, path);
  return path;
}

export async function createNamespace(kc: KubeConfig, name: string): Promise<void> {
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
}
