import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';

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
