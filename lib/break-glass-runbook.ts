import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { createHash } from 'node:crypto';
import { BREAK_GLASS_RUNBOOK_STEP } from '../functions/core/gates/contract.ts';
import { RUNTIME_ENV } from '../functions/core/runtime-contract.ts';
import {
  allowReadingExecutions,
  automationRole,
  failOnRefusal,
  grantRunbookStart,
  invokeWithExecutionId,
} from './runbooks.ts';

export interface BreakGlassRunbookContentOptions {
  /** The break_glass entry (alias) the runbook's one step invokes. */
  readonly functionArn: string;
  readonly assumeRoleArn: string;
}

/**
 * The break-glass runbook (Automation, schemaVersion 0.3): its parameters are the override's
 * fields, and its step invokes the gate function's break_glass entry with the execution's id
 * and nothing else (then fails the execution if the function answers that it refused). No approval step: who may break the glass is decided by IAM (who may start
 * the runbook), and the function makes the override as the principal Systems Manager records as
 * having started it.
 */
export function breakGlassRunbookContent(options: BreakGlassRunbookContentOptions): Record<string, unknown> {
  return {
    schemaVersion: '0.3',
    description:
      'sluice BREAK-GLASS: let one pinned revision through closed gates for a while, with a reason (audited as OVERRIDE, alarmed; never bypasses ownership, the cascade guard or the mass-deletion brake)',
    assumeRole: options.assumeRoleArn,
    parameters: {
      revision: {
        type: 'String',
        description: 'The revision to let through, <tag>@sha256:<hex> as sluice status shows it (required)',
      },
      window: {
        type: 'String',
        description: "How long the override lasts, e.g. 1h (at most each gate's maxOverride, 4h by default)",
      },
      reason: { type: 'String', description: 'Why the glass is broken, e.g. "INC-77 hotfix" (required)' },
      gates: {
        type: 'StringList',
        description: 'The gates to override (empty: every gate of the one delivery named in deliveries)',
        default: [],
      },
      deliveries: {
        type: 'StringList',
        description: 'The deliveries the override is for (empty: every delivery using the gates)',
        default: [],
      },
    },
    mainSteps: [
      { ...invokeWithExecutionId(BREAK_GLASS_RUNBOOK_STEP, options.functionArn), isEnd: false },
      // A refused override is the function's answer (audited), and still fails the execution.
      ...failOnRefusal(BREAK_GLASS_RUNBOOK_STEP),
    ],
  };
}

export interface BreakGlassRunbookProps {
  /** The break_glass alias of the gate function. */
  readonly entry: lambda.Alias;
  readonly gateFunction: lambda.Function;
  readonly gateRole: iam.IRole;
}

/**
 * The break-glass runbook, its automation role (which may invoke the break_glass entry and
 * nothing else), and the gate function's knowledge of its name (`SLUICE_BREAK_GLASS_RUNBOOK`).
 */
export class BreakGlassRunbook extends Construct {
  readonly documentName: string;
  private readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: BreakGlassRunbookProps) {
    super(scope, id);
    const hash = createHash('sha256')
      .update(`${Stack.of(this).stackName}/${this.node.path}`)
      .digest('hex')
      .slice(0, 10);
    this.documentName = `sluice-break-glass-${hash}`;
    this.role = automationRole(
      this,
      'AutomationRole',
      "sluice: Systems Manager Automation runs the break-glass runbook (invokes the gate function's break_glass entry)",
    );
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.entry.functionArn] }),
    );
    new ssm.CfnDocument(this, 'Document', {
      name: this.documentName,
      documentType: 'Automation',
      documentFormat: 'JSON',
      updateMethod: 'NewVersion',
      content: breakGlassRunbookContent({
        functionArn: props.entry.functionArn,
        assumeRoleArn: this.role.roleArn,
      }),
    });
    allowReadingExecutions(this, props.gateRole);
    props.gateFunction.addEnvironment(RUNTIME_ENV.breakGlassRunbook, this.documentName);
  }

  /** Lets `grantee` start the runbook (break the glass in the console) and follow its executions. */
  grant(grantee: iam.IGrantable): iam.Grant {
    return grantRunbookStart(this, { grantee, documentName: this.documentName, role: this.role });
  }
}
