import { Annotations, Lazy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { entryAlias } from './function-entry.ts';
import { Construct } from 'constructs';
import { createHash } from 'node:crypto';
import { formatDuration, type Gate } from '../functions/core/config/index.ts';
import { PINNABLE_REVISION } from '../functions/core/model/pinnable-revision.ts';
import { REFUSED_OUTCOME_MARK, RUNBOOK_STEPS, RUNBOOKS_ALIAS } from '../functions/core/gates/contract.ts';
import { RUNTIME_ENV } from '../functions/core/runtime-contract.ts';
import { nagResourceName } from './nag.ts';

/** How long a runbook's approve step waits for its approvers: a working day. */
export const RUNBOOK_APPROVAL_TIMEOUT_SECONDS = 24 * 3600;
/** aws:approve takes at most 10 approvers. */
const MAX_RUNBOOK_APPROVERS = 10;

export interface RunbookContentOptions {
  readonly gate: Gate;
  /** IAM ARNs (users, roles) who may approve. */
  readonly approvers: readonly string[];
  /** The function (alias) the last step invokes. */
  readonly functionArn: string;
  readonly assumeRoleArn: string;
  readonly notificationArn?: string;
}

/**
 * A gate's Automation runbook (schemaVersion 0.3): an `aws:approve` step by the gate's approvers
 * (MinRequiredApprovals = the gate's `approvers`), then an invocation of the gate function with
 * the execution's id and nothing else: the function reads the rest from Systems Manager.
 */
export function runbookContent(options: RunbookContentOptions): Record<string, unknown> {
  const { gate } = options;
  const pins = gate.approval === 'revision';
  return {
    schemaVersion: '0.3',
    description: `sluice: open gate '${gate.name}' once ${gate.approvers} of its approvers approve (the gate function verifies the approval with Systems Manager)`,
    assumeRole: options.assumeRoleArn,
    // Each parameter is checked by Systems Manager when the execution starts, before anyone is
    // asked to approve: a tag without its digest, a malformed window or delivery name is refused then.
    parameters: {
      revision: {
        type: 'String',
        description: pins
          ? 'The revision to approve: sha256:<hex> or <tag>@sha256:<hex>, as sluice status shows it (required: this gate opens for one digest at a time)'
          : 'The revision to approve: sha256:<hex> or <tag>@sha256:<hex>, as sluice status shows it; leave it empty to approve any revision (a tag alone is refused: tags move)',
        allowedPattern: pins ? REVISION_PATTERN : `^$|${REVISION_PATTERN}`,
        ...(!pins && { default: '' }),
      },
      deliveries: {
        type: 'StringList',
        description: 'The deliveries to open the gate for (empty: every delivery using it)',
        allowedPattern: DELIVERY_PATTERN,
        default: [],
      },
      window: {
        type: 'String',
        description: `How long the gate stays open, e.g. 30m, 1h (empty: the gate's window${gate.windowMs !== undefined ? `, ${formatDuration(gate.windowMs)}` : ''})`,
        allowedPattern: WINDOW_PATTERN,
        default: '',
      },
      reason: { type: 'String', description: 'Why, e.g. a change ticket', default: '' },
    },
    mainSteps: [
      {
        name: RUNBOOK_STEPS.approve,
        action: 'aws:approve',
        timeoutSeconds: RUNBOOK_APPROVAL_TIMEOUT_SECONDS,
        onFailure: 'Abort',
        inputs: {
          ...(options.notificationArn && { NotificationArn: options.notificationArn }),
          Message: approvalMessage(gate),
          MinRequiredApprovals: gate.approvers,
          Approvers: [...options.approvers],
        },
      },
      { ...invokeWithExecutionId(RUNBOOK_STEPS.openGate, options.functionArn), isEnd: false },
      ...failOnRefusal(RUNBOOK_STEPS.openGate),
    ],
  };
}

/**
 * The steps after the invocation: the function answers a refused approval or break-glass override
 * (an ungranted approver or starter, a replay, an approval from before the gate's last close, an
 * override the gates do not allow) with outcome `refused` rather than a
 * function error, so that it is audited; these steps still fail the execution on it, with the
 * function's answer as the failure, so the console shows the refusal. Any other answer ends the
 * execution there.
 */
export function failOnRefusal(invokeStep: string): Record<string, unknown>[] {
  const payload = `{{${invokeStep}.Payload}}`;
  return [
    {
      name: RUNBOOK_STEPS.checkOutcome,
      action: 'aws:branch',
      isEnd: true,
      inputs: {
        Choices: [{ NextStep: RUNBOOK_STEPS.refused, Variable: payload, Contains: REFUSED_OUTCOME_MARK }],
      },
    },
    {
      name: RUNBOOK_STEPS.refused,
      action: 'aws:executeScript',
      isEnd: true,
      inputs: {
        Runtime: 'python3.11',
        Handler: 'refuse',
        Script: 'def refuse(events, context):\n    raise Exception(events["answer"])\n',
        InputPayload: { answer: payload },
      },
    },
  ];
}

/**
 * A revision as an approval pins it (the gate function's PINNABLE_REVISION): an optional tag,
 * then the digest. Systems Manager matches allowedPattern as a Java regular expression; this one
 * reads the same there.
 */
export const REVISION_PATTERN = `^${PINNABLE_REVISION.source.replace(/^\^|\$$/g, '')}$`;
/** A delivery name as the config schema takes it: a DNS label of at most 63 characters. */
const DELIVERY_PATTERN = '^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** Empty, or a duration as sluice writes one (30s, 5m, 1h30m, 7d). */
const WINDOW_PATTERN = '^(\\d+(ms|d|h|m|s))*$';

/**
 * What the approvers read, what they approve first: the digest and the deliveries, then the
 * window and the reason, each labelled so that an empty one still reads as a sentence.
 */
function approvalMessage(gate: Gate): string {
  const any = gate.approval === 'revision' ? '' : ' (empty: any revision)';
  return [
    `sluice: approve opening gate '${gate.name}'.`,
    `Revision${any}: {{revision}} (the gate opens for the digest after the @; the tag is as the requester wrote it, not checked against the registry).`,
    'Deliveries (empty: every delivery using the gate): {{deliveries}}.',
    "Window (empty: the gate's own): {{window}}.",
    'Reason: {{reason}}.',
  ].join(' ');
}

/**
 * A runbook's last step: invoke the gate function (the entry `functionArn` names) with the
 * execution's id and nothing else, so the function reads everything else from Systems Manager.
 */
export function invokeWithExecutionId(name: string, functionArn: string): Record<string, unknown> {
  return {
    name,
    action: 'aws:invokeLambdaFunction',
    isEnd: true,
    inputs: {
      FunctionName: functionArn,
      InvocationType: 'RequestResponse',
      Payload: '{"ssmExecution":"{{automation:EXECUTION_ID}}"}',
    },
  };
}

export interface GateRunbooksProps {
  readonly gates: readonly Gate[];
  readonly gateFunction: lambda.Function;
  readonly gateRole: iam.IRole;
  /** Where approval requests go. */
  readonly notificationTopic?: sns.ITopic;
}

interface Runbook {
  readonly document: ssm.CfnDocument;
  readonly approvers: string[];
}

/**
 * A Systems Manager Automation runbook per gate that someone may approve (made on the first open
 * grant), its automation role, and the `runbooks` alias its last step invokes. The gate function
 * learns the runbooks' names from its environment (`SLUICE_GATE_RUNBOOKS`).
 */
export class GateRunbooks extends Construct {
  private readonly runbooks = new Map<string, Runbook>();
  private readonly gates: ReadonlyMap<string, Gate>;
  private automation?: { role: iam.Role; alias: lambda.Alias };

  constructor(
    scope: Construct,
    id: string,
    private readonly props: GateRunbooksProps,
  ) {
    super(scope, id);
    this.gates = new Map(props.gates.map((gate) => [gate.name, gate]));
    props.gateFunction.addEnvironment(RUNTIME_ENV.gateRunbooks, this.names());
  }

  /**
   * `{"<gate>": "<document name>"}` of the runbooks made by synthesis (`SLUICE_GATE_RUNBOOKS`): the
   * names are fixed by the stack and gate, so a function can know them without a reference.
   */
  names(): string {
    return Lazy.string({
      produce: () =>
        JSON.stringify(
          Object.fromEntries([...this.runbooks.keys()].map((gate) => [gate, this.documentName(gate)])),
        ),
    });
  }

  /** Whether `gate` has a runbook (someone was granted its open requests). */
  has(gate: string): boolean {
    return this.runbooks.has(gate);
  }

  /**
   * The runbook's document name, fixed by the stack, the gate and its approvers, so the gate
   * function knows it without a reference. A change of approvers names a new document (the old one
   * is replaced), so an execution of the old one, started or approved by someone no longer an
   * approver, is not one of the function's runbooks and opens nothing.
   */
  documentName(gate: string): string {
    return Lazy.string({
      produce: () => {
        const approvers = (this.runbooks.get(gate)?.approvers ?? []).map((arn) =>
          JSON.stringify(Stack.of(this).resolve(arn)),
        );
        const resolved = approvers.sort().join(',');
        const hash = createHash('sha256')
          .update(`${Stack.of(this).stackName}/${this.node.path}|${resolved}`)
          .digest('hex')
          .slice(0, 10);
        return `sluice-${gate}-${hash}`;
      },
    });
  }

  /** Adds the principal behind `grantee` to the gate's approvers and lets it approve and reject. */
  addApprover(grantee: iam.IGrantable, gate: string): iam.Grant {
    const arn = principalArn(grantee.grantPrincipal);
    const runbook = this.runbook(gate);
    if (arn === undefined)
      Annotations.of(this).addWarningV2(
        'sluice:runbookApprover',
        `gate '${gate}': ${grantee.grantPrincipal} is not an IAM user or role, so it cannot approve in the gate's runbook (aws:approve takes IAM ARNs)`,
      );
    else if (!runbook.approvers.includes(arn)) runbook.approvers.push(arn);
    acknowledgeExecutions(this, grantee);
    return iam.Grant.addToPrincipal({
      grantee,
      actions: [
        'ssm:SendAutomationSignal',
        'ssm:GetAutomationExecution',
        'ssm:DescribeAutomationStepExecutions',
      ],
      resourceArns: [executionsArn(this)],
    });
  }

  /** Lets `grantee` start the gate's runbook (asking its approvers) and follow its executions. */
  grantRequest(grantee: iam.IGrantable, gate: string): iam.Grant {
    this.runbook(gate);
    const { role } = this.automationParts();
    return grantRunbookStart(this, { grantee, documentName: this.documentName(gate), role });
  }

  private runbook(gate: string): Runbook {
    const existing = this.runbooks.get(gate);
    if (existing) return existing;
    const spec = this.gates.get(gate);
    if (!spec)
      throw new Error(
        `gate '${gate}' is not one of this Sluice's gates (${[...this.gates.keys()].join(', ') || 'none are defined'})`,
      );
    const { role, alias } = this.automationParts();
    const approvers: string[] = [];
    const document = new ssm.CfnDocument(this, `Runbook-${gate}`, {
      name: this.documentName(gate),
      documentType: 'Automation',
      documentFormat: 'JSON',
      updateMethod: 'NewVersion',
      content: Lazy.any({
        produce: () =>
          runbookContent({
            gate: spec,
            approvers,
            functionArn: alias.functionArn,
            assumeRoleArn: role.roleArn,
            notificationArn: this.props.notificationTopic?.topicArn,
          }),
      }),
    });
    this.node.addValidation({
      validate: () =>
        approvers.length === 0
          ? [
              `gate '${gate}' has a runbook but no approvers: grantGateRequests(approver, '${gate}') names who may approve`,
            ]
          : approvers.length > MAX_RUNBOOK_APPROVERS
            ? [
                `gate '${gate}' has ${approvers.length} approvers; a runbook's aws:approve takes at most ${MAX_RUNBOOK_APPROVERS} (grant a role that several people assume)`,
              ]
            : [],
    });
    const runbook = { document, approvers };
    this.runbooks.set(gate, runbook);
    return runbook;
  }

  /** The role Automation runs the runbooks as (it may invoke the `runbooks` alias and nothing else), made once. */
  private automationParts(): { role: iam.Role; alias: lambda.Alias } {
    if (this.automation) return this.automation;
    const alias = entryAlias(this, 'RunbooksAlias', this.props.gateFunction, RUNBOOKS_ALIAS);
    const role = automationRole(
      this,
      'AutomationRole',
      "sluice: Systems Manager Automation runs the gates' runbooks (invokes the gate function)",
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [alias.functionArn] }),
    );
    // aws:approve publishes the approval request to the topic as this role.
    this.props.notificationTopic?.grantPublish(role);
    // The gate function reads the executions' records; their ids are made at run time.
    allowReadingExecutions(this, this.props.gateRole);
    this.automation = { role, alias };
    return this.automation;
  }
}

/** The IAM ARN of a user or role principal, as aws:approve's Approvers take it. */
function principalArn(principal: iam.IPrincipal): string | undefined {
  if (principal instanceof iam.ArnPrincipal) return principal.arn;
  const candidate = principal as Partial<iam.IRole & iam.IUser>;
  return candidate.roleArn ?? candidate.userArn;
}

export interface RunbookStartOptions {
  readonly grantee: iam.IGrantable;
  /** The runbook's document name. */
  readonly documentName: string;
  /** The role Automation runs the runbook as, which the starter passes to Systems Manager. */
  readonly role: iam.IRole;
}

/** Lets `grantee` start a runbook (any version), read it, pass its automation role, and follow its executions. */
export function grantRunbookStart(scope: Construct, options: RunbookStartOptions): iam.Grant {
  const { grantee, documentName, role } = options;
  const stack = Stack.of(scope);
  const definition = stack.formatArn({
    service: 'ssm',
    resource: 'automation-definition',
    resourceName: `${documentName}:*`,
  });
  acknowledgeExecutions(scope, grantee);
  acknowledge(
    scope,
    grantee,
    definition,
    'StartAutomationExecution names a runbook version (<name>:<version>); the grant is this runbook, any version.',
  );
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['ssm:StartAutomationExecution'],
    resourceArns: [definition],
  })
    .combine(
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['ssm:GetAutomationExecution', 'ssm:DescribeAutomationStepExecutions'],
        resourceArns: [executionsArn(scope)],
      }),
    )
    .combine(
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['ssm:DescribeDocument', 'ssm:GetDocument'],
        resourceArns: [stack.formatArn({ service: 'ssm', resource: 'document', resourceName: documentName })],
      }),
    )
    .combine(
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['iam:PassRole'],
        resourceArns: [role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'ssm.amazonaws.com' } },
      }),
    );
}

/** Every Automation execution of the stack's account and Region: their ids are made at run time. */
export function executionsArn(scope: Construct): string {
  return Stack.of(scope).formatArn({ service: 'ssm', resource: 'automation-execution', resourceName: '*' });
}

/** A role Systems Manager Automation assumes for this account's executions only. */
export function automationRole(scope: Construct, id: string, description: string): iam.Role {
  return new iam.Role(scope, id, {
    description,
    assumedBy: new iam.ServicePrincipal('ssm.amazonaws.com', {
      conditions: {
        StringEquals: { 'aws:SourceAccount': Stack.of(scope).account },
        ArnLike: { 'aws:SourceArn': executionsArn(scope) },
      },
    }),
  });
}

/** Lets the gate function read executions' records (GetAutomationExecution), acknowledged for cdk-nag. */
export function allowReadingExecutions(scope: Construct, gateRole: iam.IRole): void {
  gateRole.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['ssm:GetAutomationExecution'], resources: [executionsArn(scope)] }),
  );
  Validations.of(gateRole).acknowledge({
    id: `AwsSolutions::AwsSolutions-IAM5[Resource::${nagResourceName(scope, executionsArn(scope))}]`,
    reason:
      'GetAutomationExecution takes an execution id made at run time; the function checks that the execution ran one of its own runbooks.',
  });
}

/** The executions' wildcard in a grantee's policy, acknowledged for cdk-nag with its reason. */
function acknowledgeExecutions(scope: Construct, grantee: iam.IGrantable): void {
  acknowledge(
    scope,
    grantee,
    executionsArn(scope),
    'Automation execution ids are made at run time; Systems Manager itself lets only the approvers a runbook lists signal it.',
  );
}

function acknowledge(scope: Construct, grantee: iam.IGrantable, arn: string, reason: string): void {
  const principal = grantee.grantPrincipal;
  if (!Construct.isConstruct(principal)) return;
  Validations.of(principal).acknowledge({
    id: `AwsSolutions::AwsSolutions-IAM5[Resource::${nagResourceName(scope, arn)}]`,
    reason,
  });
}
