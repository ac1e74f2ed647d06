import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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
