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
 * The conditional put that marks an execution as used, as a transaction item too: written with
 * what the execution makes (a break-glass override), so a refused one leaves no claim behind.
 */
export function runbookExecutionClaim(db: TableClient, executionId: string, gate: string, at: Date) {
  return {
    TableName: db.table,
    Item: { ...KEY(executionId), gate, usedAt: at.toISOString() },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

/** The first use of an execution, or undefined when it was not used. */
export async function runbookExecutionUse(
  db: TableClient,
  executionId: string,
): Promise<RunbookExecutionUse | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: KEY(executionId), ConsistentRead: true }),
  );
  return Item && { gate: String(Item.gate ?? '?'), usedAt: String(Item.usedAt ?? '?') };
}

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
    await db.doc.send(new PutCommand(runbookExecutionClaim(db, executionId, gate, at)));
    return undefined;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return (await runbookExecutionUse(db, executionId)) ?? { gate: '?', usedAt: '?' };
  }
}
