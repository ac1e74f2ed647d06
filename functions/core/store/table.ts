import {
  CreateTableCommand,
  DescribeTableCommand,
  PutItemCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { poll, systemClock, type Clock } from '../clock.ts';
import { TABLE_SCHEMA } from '../model/table-schema.ts';
import { LOOKUPS_MARKER } from './delivery-lookups.ts';

export { TABLE_SCHEMA };

/** Creates the sluice table (on-demand) if it does not exist yet, for local use; CDK owns it in AWS. */
export async function ensureTable(
  ddb: DynamoDBClient,
  tableName: string,
  clock: Clock = systemClock,
): Promise<void> {
  try {
    await ddb.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: TABLE_SCHEMA.partitionKey, AttributeType: 'S' },
          { AttributeName: TABLE_SCHEMA.sortKey, AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    return;
  }
  await poll({
    clock,
    every: 100,
    timeout: 5_000,
    until: async () =>
      (await ddb.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus === 'ACTIVE',
  });
  await ddb.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.timeToLiveAttribute, Enabled: true },
    }),
  );
  // A new table holds no spec stored before the delivery lookups: there is nothing to build.
  await ddb.send(
    new PutItemCommand({
      TableName: tableName,
      Item: { pk: { S: LOOKUPS_MARKER.pk }, sk: { S: LOOKUPS_MARKER.sk } },
    }),
  );
}
