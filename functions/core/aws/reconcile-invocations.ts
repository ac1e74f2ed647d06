import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { forEachBounded } from '../pacer.ts';

/**
 * How many Invoke requests one fan-out keeps in flight: the SDK's default socket pool (50), so
 * 1,000 deliveries take a few seconds of one invocation, not one request after another.
 */
export const FAN_OUT_CONCURRENCY = 50;

/**
 * Reconciles deliveries by invoking the reconcile function asynchronously (InvocationType
 * `Event`), one `{"delivery": name}` per delivery: each runs in its own invocation, with Lambda's
 * retries and on-failure destination (the failure queue). Throws, naming them, when some could not
 * be handed to Lambda, so that the event that asked for them fails (and is retried, then routed
 * to the failure queue) rather than losing them; a delivery invoked twice runs once at a time
 * (its lease).
 */
export function lambdaReconcileNow(
  lambda: LambdaClient,
  functionName: string,
): (deliveries: readonly string[]) => Promise<void> {
  return async (deliveries) => {
    const failed: string[] = [];
    await forEachBounded(deliveries, FAN_OUT_CONCURRENCY, async (delivery) => {
      try {
        await lambda.send(
          new InvokeCommand({
            FunctionName: functionName,
            InvocationType: 'Event',
            Payload: Buffer.from(JSON.stringify({ delivery })),
          }),
        );
      } catch (error) {
        failed.push(`${delivery} (${error instanceof Error ? error.message : String(error)})`);
      }
    });
    if (failed.length > 0) {
      const shown = failed.slice(0, 10).join(', ');
      throw new Error(
        `could not invoke ${functionName} for ${failed.length} of ${deliveries.length} deliveries: ${shown}${failed.length > 10 ? ', …' : ''}`,
      );
    }
  };
}
