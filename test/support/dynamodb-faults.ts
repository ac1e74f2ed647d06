// A DynamoDB client for the real DynamoDB Local whose calls can be made to fail: throttling, or
// nothing at all once a run is "killed". The failure is raised before the SDK's retry step, so the
// engine sees it as it would see throttling that outlasted the SDK's retries.
import {
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { tableClient, type TableClient } from '../../functions/core/store/table-client.ts';

export interface DynamoCall {
  /** 1-based position among this client's calls. */
  readonly index: number;
  /** e.g. `UpdateItemCommand`, `BatchWriteItemCommand`. */
  readonly command: string;
  /** The partition key of the one item it reads or writes, if it names one. */
  readonly pk?: string;
  /** A renewal of a lease or a cluster slot: a failed one is retried at the next tick, by design. */
  readonly renewal?: boolean;
}

/**
 * `throttle`: ProvisionedThroughputExceededException; `dead`: the process is gone, nothing answers;
 * `conflict`: a transaction cancelled because another touched the same item (TransactionConflict).
 */
export type DynamoFault = 'throttle' | 'dead' | 'conflict';

export interface FaultyTable {
  readonly db: TableClient;
  /** Every call made (failed ones included), in order. */
  readonly calls: readonly DynamoCall[];
  /** Calls failed on purpose. */
  readonly failed: readonly DynamoCall[];
  /** Calls that the table refused with ConditionalCheckFailedException. */
  readonly conditionalFailures: readonly DynamoCall[];
}

/**
 * @param before awaited before each call is sent: a test does something else "meanwhile" there
 * (another run, a removal), at an exact point of the run under test.
 */
export function faultyTable(
  table: string,
  faultFor: (call: DynamoCall) => DynamoFault | undefined,
  before?: (call: DynamoCall) => Promise<void>,
): FaultyTable {
  const client = new DynamoDBClient({});
  const calls: DynamoCall[] = [];
  const failed: DynamoCall[] = [];
  const conditionalFailures: DynamoCall[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        Key?: { pk?: unknown };
        Item?: { pk?: unknown };
        UpdateExpression?: string;
      };
      const pk = input.Key?.pk ?? input.Item?.pk;
      const renewal = /leaseVersion = leaseVersion \+|^SET heldUntil = /.test(input.UpdateExpression ?? '');
      const call = {
        index: calls.length + 1,
        command: context.commandName ?? 'unknown',
        ...(typeof pk === 'string' && { pk }),
        ...(renewal && { renewal }),
      };
      calls.push(call);
      await before?.(call);
      const fault = faultFor(call);
      if (fault === 'throttle') {
        failed.push(call);
        throw new ProvisionedThroughputExceededException({
          message: `injected: the request rate for the table exceeds its throughput (${call.command})`,
          $metadata: { httpStatusCode: 400 },
        });
      }
      if (fault === 'conflict') {
        failed.push(call);
        throw new TransactionCanceledException({
          message:
            'injected: Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict, None]',
          $metadata: { httpStatusCode: 400 },
          CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
        });
      }
      if (fault === 'dead') {
        failed.push(call);
        throw new Error(`injected: the run is dead; ${call.command} was never sent`);
      }
      try {
        return await next(args);
      } catch (error) {
        if ((error as Error).name === 'ConditionalCheckFailedException') conditionalFailures.push(call);
        throw error;
      }
    },
    { step: 'initialize', name: 'sluiceFaultInjection' },
  );
  return { db: tableClient(client, table), calls, failed, conditionalFailures };
}
