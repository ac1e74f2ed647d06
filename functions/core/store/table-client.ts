import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  type BatchWriteCommandOutput,
} from '@aws-sdk/lib-dynamodb';

/** The sluice table as core modules reach it: a document client and the table's name. */
export interface TableClient {
  readonly doc: DynamoDBDocumentClient;
  readonly table: string;
}

export const deliveryKey = (name: string) => `delivery#${name}`;
export const gateKey = (name: string) => `gate#${name}`;
/** The item listing every registered delivery (one sort key per delivery name). */
export const DELIVERY_INDEX = 'deliveries';

/** A TableClient over a DynamoDB client; undefined attributes are dropped, not rejected. */
export function tableClient(ddb: DynamoDBClient, table: string): TableClient {
  return {
    doc: DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true } }),
    table,
  };
}

/** Every item under partition `pk` (whose sort key starts with `skPrefix`, if given), all pages read. */
export async function queryPartition(
  db: TableClient,
  pk: string,
  options: { readonly skPrefix?: string; readonly projection?: string; readonly consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: options.skPrefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
        ExpressionAttributeValues: {
          ':pk': pk,
          ...(options.skPrefix ? { ':prefix': options.skPrefix } : {}),
        },
        ProjectionExpression: options.projection,
        ConsistentRead: options.consistent,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

export type WriteRequest = NonNullable<
  ConstructorParameters<typeof BatchWriteCommand>[0]['RequestItems']
>[string][number];

/** Puts and deletes, 25 to a request (BatchWriteItem's limit), sent again until none is left unprocessed. */
export async function batchWrite(db: TableClient, requests: readonly WriteRequest[]): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending: WriteRequest[] | undefined = requests.slice(i, i + 25);
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error(`DynamoDB kept ${pending.length} batched writes unprocessed`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const result: BatchWriteCommandOutput = await db.doc.send(
        new BatchWriteCommand({ RequestItems: { [db.table]: pending } }),
      );
      pending = result.UnprocessedItems?.[db.table];
    }
  }
}
