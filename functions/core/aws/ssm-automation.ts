import {
  AutomationExecutionNotFoundException,
  GetAutomationExecutionCommand,
  type SSMClient,
} from '@aws-sdk/client-ssm';
import type { AutomationRecord, ReadAutomation } from '../approvals/runbook-approval.ts';

/** GetAutomationExecution, as the record the gate function verifies; undefined for an unknown id. */
export function ssmAutomationReader(ssm: SSMClient): ReadAutomation {
  return async (executionId) => {
    let execution;
    try {
      ({ AutomationExecution: execution } = await ssm.send(
        new GetAutomationExecutionCommand({ AutomationExecutionId: executionId }),
      ));
    } catch (error) {
      if (error instanceof AutomationExecutionNotFoundException) return undefined;
      throw error;
    }
    if (!execution) return undefined;
    const record: AutomationRecord = {
      executionId: execution.AutomationExecutionId ?? executionId,
      documentName: execution.DocumentName ?? '',
      ...(execution.ExecutedBy && { executedBy: execution.ExecutedBy }),
      ...(execution.ExecutionStartTime && { startTime: execution.ExecutionStartTime }),
      ...(execution.Mode && { mode: execution.Mode }),
      parameters: execution.Parameters ?? {},
      steps: (execution.StepExecutions ?? []).map((step) => ({
        name: step.StepName ?? '',
        action: step.Action ?? '',
        status: step.StepStatus ?? '',
        ...(step.ExecutionStartTime && { startTime: step.ExecutionStartTime }),
        ...(step.ExecutionEndTime && { endTime: step.ExecutionEndTime }),
        outputs: step.Outputs ?? {},
      })),
    };
    return record;
  };
}
