import { Logger } from '@aws-lambda-powertools/logger';
import { LambdaClient } from '@aws-sdk/client-lambda';
import type { Context } from 'aws-lambda';
import { systemClock } from '../core/clock.ts';
import { reconcileDepsFromEnvironment } from '../core/environment.ts';
import { lambdaReconcileNow } from '../core/aws/reconcile-invocations.ts';
import { deleteDelivery } from '../core/reconcile/delete.ts';
import {
  handleSpecEvent,
  type SpecResourceEvent,
  type SpecResourceResponse,
} from '../core/spec-resource/resource.ts';
import { RUNTIME_ENV } from '../core/runtime-contract.ts';

const logger = new Logger({ serviceName: 'sluice-spec' });

/**
 * The onEvent handler of the per-delivery and per-gate custom resources (CDK Provider framework):
 * writes specs on create/update, deletes deliveries (pruning their objects) and gates on delete.
 */
export async function handler(event: SpecResourceEvent, context: Context): Promise<SpecResourceResponse> {
  const log = (message: string) => logger.info(message);
  const reconcileFunction = process.env[RUNTIME_ENV.reconcileFunction];
  const reconcileNow = reconcileFunction
    ? lambdaReconcileNow(new LambdaClient({}), reconcileFunction)
    : undefined;
  // reconcileNow also lets the deliveries that kept a removed one's objects take them over at once.
  const deps = { ...reconcileDepsFromEnvironment({ runId: context.awsRequestId, log }), reconcileNow };
  const response = await handleSpecEvent(event, {
    db: deps.db,
    clock: systemClock,
    deleteDelivery: (name) => deleteDelivery(name, deps),
    reconcileNow,
    log,
  });
  logger.info(`${event.RequestType} ${event.ResourceProperties.Kind} ${event.ResourceProperties.Name}`, {
    physicalResourceId: response.PhysicalResourceId,
  });
  return response;
}
