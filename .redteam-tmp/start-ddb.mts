import { startDynamoDbLocal } from '/work/main/dev/dynamodb-local.ts';
import { javaBinary, dynamoDbLocalDir } from '/work/main/dev/provision.ts';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '/work/main/functions/core/store/table.ts';
import { writeFileSync } from 'node:fs';
const d = await startDynamoDbLocal(javaBinary(), await dynamoDbLocalDir(), '/tmp/redteam/ddb');
await ensureTable(new DynamoDBClient({ endpoint: d.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }), 'sluice');
writeFileSync('/tmp/redteam/ddb.json', JSON.stringify(d));
console.log(d);
