import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';

/** Reconciles deliveries by invoking the reconcile function asynchronously, one event per delivery. */
export function lambdaReconcileNow(
  lambda: LambdaClient,
  functionName: string,
): (deliveries: readonly string[]) => Promise<void> {
  return async (deliveries) => {
    await Promise.all(
      deliveries.map((delivery) =>
        lambda.send(
          new InvokeCommand({
            FunctionName: functionName,
            InvocationType: 'Event',
            Payload: Buffer.from(JSON.stringify({ delivery })),
          }),
        ),
      ),
    );
  };
}
