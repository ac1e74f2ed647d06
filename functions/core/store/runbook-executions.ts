import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { TableClient } from './table-client.ts';

/** Who used a runbook execution first: an execution opens a gate once. */
export interface RunbookExecutionUse {
  readonly gate: string;
  readonly usedAt: string;
}

const KEY = (executionId: string) => ({ pk: `runbook-execution#${executionId}`, sk: 'used' });

/**
 * Marks a Systems Manager Automation execution as used, conditionally: the first caller gets
 * `undefined`; anyone after it (a replay) gets the first use.
 */
export async function claimRunbookExecution(
  db: TableClient,
  executionId: string,
  gate: string,
  at: Date,
): Promise<RunbookExecutionUse | undefined> {
  try {
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { ...KEY(executionId), gate, usedAt: at.toISOString() },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return undefined;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const { Item } = await db.doc.send(
      new GetCommand({ TableName: db.table, Key: KEY(executionId), ConsistentRead: true }),
    );
    return { gate: String(Item?.gate ?? '?'), usedAt: String(Item?.usedAt ?? '?') };
  }
}
