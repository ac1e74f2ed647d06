// A table client that records the operation of each request it sends (DynamoDB Local).
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tableClient, type TableClient } from '../../functions/core/store/table-client.ts';

export function countedTableOf(bed: {
  readonly dynamoDb: () => DynamoDBClient;
  readonly dynamodb: { readonly table: string };
}): { db: TableClient; sent: string[] } {
  const client = bed.dynamoDb();
  const sent: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push((context.commandName ?? '?').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name: 'countTableRequests' },
  );
  return { db: tableClient(client, bed.dynamodb.table), sent };
}
