import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { jsonProtocol } from './aws-json.ts';
import { verifySigV4, type TestIdentity } from './sigv4-identity.ts';

const TARGET_PREFIX = 'AmazonSSM.';

class SsmError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** An Automation runbook as CloudFormation's AWS::SSM::Document Content holds it (schemaVersion 0.3). */
export interface AutomationDocument {
  readonly schemaVersion: string;
  readonly parameters?: Record<
    string,
    { readonly type: string; readonly default?: unknown; readonly allowedPattern?: string }
  >;
  readonly mainSteps: readonly {
    readonly name: string;
    readonly action: string;
    readonly isEnd?: boolean;
    readonly inputs: Record<string, unknown>;
  }[];
}

/** What an aws:invokeLambdaFunction step's invocation returned. */
export interface LambdaInvocation {
  readonly statusCode: number;
  readonly payload: string;
  readonly functionError?: string;
}

export interface SsmEndpointOptions {
  readonly identities: readonly TestIdentity[];
  /** The registered runbooks by document name. */
  readonly documents: ReadonlyMap<string, AutomationDocument>;
  /** Runs an aws:invokeLambdaFunction step (the function as the step names it, the resolved payload). */
  readonly invoke: (functionName: string, payload: string) => Promise<LambdaInvocation>;
  readonly now?: () => Date;
}

interface Step {
  StepName: string;
  Action: string;
  StepStatus: string;
  StepExecutionId: string;
  Inputs: Record<string, string>;
  Outputs?: Record<string, string[]>;
  ExecutionStartTime?: number;
  ExecutionEndTime?: number;
  FailureMessage?: string;
}

interface Execution {
  readonly id: string;
  readonly documentName: string;
  readonly document: AutomationDocument;
  readonly executedBy: string;
  readonly parameters: Record<string, string[]>;
  readonly startTime: number;
  /** `Auto` runs the steps on its own; `Interactive` runs one when a StartStep signal names it. */
  readonly mode: 'Auto' | 'Interactive';
  status: string;
  endTime?: number;
  readonly steps: Step[];
  readonly decisions: {
    Approver: string;
    Decision: string;
    ApprovalDecisionTime: string;
    Comment?: string;
  }[];
  index: number;
  readonly settled: Promise<void>;
  settle(): void;
}

/**
 * A Change Calendar's state as the stand-in answers GetCalendarState: OPEN or CLOSED (with the
 * next transition, if one is set), or an error of the type named (e.g. AccessDeniedException).
 */
export type ChangeCalendarStandIn =
  { readonly state: 'OPEN' | 'CLOSED'; readonly nextTransitionTime?: string } | { readonly error: string };

/** The SSM stand-in: a server and a way to wait for an execution to end. */
export interface SsmEndpoint {
  readonly server: Server;
  /** Resolves when the execution has ended (Success, Failed, …), its invoke step included. */
  settled(executionId: string): Promise<void>;
  /** Sets what GetCalendarState answers for a Change Calendar (by name; an ARN is read by its name). */
  setCalendarState(calendar: string, state: ChangeCalendarStandIn): void;
}

/**
 * A small in-memory Systems Manager Automation for gate runbooks over the JSON 1.1 protocol:
 * StartAutomationExecution of a registered document, SendAutomationSignal (Approve/Reject) and
 * GetAutomationExecution in the real API's shape, running aws:approve and
 * aws:invokeLambdaFunction steps in order (in `Mode: Interactive`, one at a time, each when a
 * StartStep signal names it). Every request must carry a SigV4 signature of one of
 * `identities`: the verified signer is who started the execution and who approves. Only a
 * principal the approve step lists (its ARN, its role for an assumed-role session, or an IAM
 * user's name) may signal it, each once; the step succeeds at MinRequiredApprovals approvals
 * and fails on the first rejection. GetCalendarState answers each Change Calendar as set with
 * setCalendarState (a calendar never set does not exist): CLOSED if any named is CLOSED.
 */
export function createSsmEndpoint(options: SsmEndpointOptions): SsmEndpoint {
  const now = options.now ?? (() => new Date());
  const executions = new Map<string, Execution>();
  const calendars = new Map<string, ChangeCalendarStandIn>();
  const seconds = () => now().getTime() / 1000;

  const find = (id: unknown): Execution => {
    const execution = executions.get(String(id));
    if (!execution)
      throw new SsmError(
        'AutomationExecutionNotFoundException',
        `Automation execution ${String(id)} not found`,
      );
    return execution;
  };

  const end = (execution: Execution, status: string) => {
    execution.status = status;
    execution.endTime = seconds();
    execution.settle();
  };

  const failStep = (execution: Execution, step: Execution['steps'][number], message: string) => {
    step.StepStatus = 'Failed';
    step.FailureMessage = message;
    step.ExecutionEndTime = seconds();
    end(execution, 'Failed');
  };

  /**
   * Runs steps from the current one until one waits or the execution ends; in Interactive mode
   * only the current one (a StartStep signal runs each), and then the execution waits.
   */
  const advance = async (execution: Execution): Promise<void> => {
    while (execution.index < execution.steps.length) {
      const step = execution.steps[execution.index]!;
      const definition = execution.document.mainSteps[execution.index]!;
      step.ExecutionStartTime ??= seconds();
      const inputs = resolve(definition.inputs, execution) as Record<string, unknown>;
      step.Inputs = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, JSON.stringify(v)]));
      if (step.Action === 'aws:approve') {
        step.StepStatus = 'Waiting';
        step.Outputs = { ApprovalStatus: ['Waiting'], ApproverDecisions: [] };
        execution.status = 'Waiting';
        return;
      }
      if (step.Action === 'aws:invokeLambdaFunction') {
        step.StepStatus = 'InProgress';
        execution.status = 'InProgress';
        try {
          const result = await options.invoke(String(inputs.FunctionName), String(inputs.Payload ?? ''));
          step.Outputs = {
            StatusCode: [String(result.statusCode)],
            Payload: [result.payload],
            ...(result.functionError && { FunctionError: [result.functionError] }),
          };
          if (result.functionError) throw new Error(`the function failed: ${result.payload}`);
        } catch (error) {
          return failStep(execution, step, (error as Error).message);
        }
        if (finish(execution, step, definition.isEnd)) return;
        continue;
      }
      if (step.Action === 'aws:branch') {
        const choices = (inputs.Choices ?? []) as Record<string, unknown>[];
        let target = inputs.Default as string | undefined;
        const unserved = choices.find((choice) => !('Contains' in choice || 'StringEquals' in choice));
        if (unserved) {
          step.StepStatus = 'Failed';
          step.FailureMessage = `a choice of ${step.StepName} uses an operator not served locally (Contains and StringEquals are)`;
          return end(execution, 'Failed');
        }
        const chosen = choices.find((choice) =>
          'Contains' in choice
            ? String(choice.Variable).includes(String(choice.Contains))
            : String(choice.Variable) === String(choice.StringEquals),
        );
        if (chosen) target = String(chosen.NextStep);
        if (target === undefined) {
          if (finish(execution, step, definition.isEnd)) return;
          continue;
        }
        const index = execution.steps.findIndex((s) => s.StepName === target);
        if (index < 0) {
          step.StepStatus = 'Failed';
          step.FailureMessage = `${step.StepName} branches to ${target}, which is no step of the document`;
          return end(execution, 'Failed');
        }
        step.StepStatus = 'Success';
        step.ExecutionEndTime = seconds();
        execution.index = index;
        continue;
      }
      if (step.Action === 'aws:executeScript') {
        step.StepStatus = 'InProgress';
        execution.status = 'InProgress';
        try {
          step.Outputs = { OutputPayload: [await runPythonScript(inputs)] };
        } catch (error) {
          return failStep(execution, step, (error as Error).message);
        }
        if (finish(execution, step, definition.isEnd)) return;
        continue;
      }
      step.StepStatus = 'Failed';
      step.FailureMessage = `the action ${step.Action} is not served locally`;
      return end(execution, 'Failed');
    }
    end(execution, 'Success');
  };

  /**
   * Marks a step done and moves on: true when the execution ended (the step is its end, or the
   * last) or waits for a StartStep signal (Interactive mode).
   */
  const finish = (execution: Execution, step: Step, isEnd: boolean | undefined): boolean => {
    step.StepStatus = 'Success';
    step.ExecutionEndTime = seconds();
    execution.index += 1;
    if (isEnd || execution.index >= execution.steps.length) {
      end(execution, 'Success');
      return true;
    }
    if (execution.mode === 'Interactive') {
      execution.status = 'Waiting';
      return true;
    }
    return false;
  };

  /**
   * SendAutomationSignal StartStep (Interactive mode): runs the step named, which must be the next
   * pending one. Who may send it is IAM's decision (ssm:SendAutomationSignal on the execution), not
   * the starter's: any signed caller may, as IAM is not modelled here.
   */
  const startStep = (execution: Execution, payload: unknown): unknown => {
    const name = ((payload ?? {}) as Record<string, string[]>).StepName?.[0];
    const step = execution.steps[execution.index];
    if (execution.mode !== 'Interactive' || !step || step.StepStatus !== 'Pending' || step.StepName !== name)
      throw new SsmError(
        'InvalidAutomationSignalException',
        `execution ${execution.id} has no pending step ${String(name)} to start (StartStep is for Interactive mode)`,
      );
    execution.status = 'InProgress';
    setImmediate(() => void advance(execution));
    return {};
  };

  const handlers: Record<string, (input: Record<string, unknown>, caller: string) => unknown> = {
    GetCalendarState(input) {
      const names = input.CalendarNames;
      if (!Array.isArray(names) || names.length === 0)
        throw new SsmError('ValidationException', 'CalendarNames must name at least one calendar');
      const atTime = input.AtTime === undefined ? now() : new Date(String(input.AtTime));
      if (Number.isNaN(atTime.getTime()))
        throw new SsmError('InvalidDocumentType', `AtTime ${JSON.stringify(input.AtTime)} is not ISO 8601`);
      const states = names.map((name) => {
        const bare = String(name).replace(/^arn:aws[\w-]*:ssm:[^:]*:\d{12}:document\//, '');
        const calendar = calendars.get(bare);
        if (!calendar) throw new SsmError('InvalidDocument', `Document ${String(name)} does not exist`);
        if ('error' in calendar)
          throw new SsmError(calendar.error, `GetCalendarState of ${bare}: ${calendar.error}`);
        return calendar;
      });
      const closed = states.filter((calendar) => calendar.state === 'CLOSED');
      const transitions = states.flatMap((calendar) => calendar.nextTransitionTime ?? []).sort();
      return {
        State: closed.length > 0 ? 'CLOSED' : 'OPEN',
        AtTime: atTime.toISOString(),
        ...(transitions[0] && { NextTransitionTime: transitions[0] }),
      };
    },
    StartAutomationExecution(input, caller) {
      const name = String(input.DocumentName ?? '');
      const document = options.documents.get(name);
      if (!document) throw new SsmError('InvalidDocument', `document ${name} does not exist`);
      const given = (input.Parameters ?? {}) as Record<string, unknown>;
      const parameters: Record<string, string[]> = {};
      for (const key of Object.keys(given))
        if (!document.parameters?.[key])
          throw new SsmError(
            'InvalidAutomationExecutionParametersException',
            `parameter ${key} is not defined`,
          );
      for (const [key, definition] of Object.entries(document.parameters ?? {})) {
        const value = given[key];
        if (value === undefined && definition.default === undefined)
          throw new SsmError('InvalidAutomationExecutionParametersException', `parameter ${key} is required`);
        const fallback = definition.default;
        parameters[key] =
          value === undefined
            ? Array.isArray(fallback)
              ? fallback.map(String)
              : [String(fallback)]
            : (value as unknown[]).map(String);
        // As Systems Manager does at the start: every value given (each of a list) matches the pattern.
        const pattern = definition.allowedPattern;
        if (pattern !== undefined && value !== undefined)
          for (const item of parameters[key])
            if (!new RegExp(pattern).test(item))
              throw new SsmError(
                'InvalidAutomationExecutionParametersException',
                `Parameter "${key}" value "${item}" does not match allowed pattern ${pattern}`,
              );
      }
      const mode = input.Mode ?? 'Auto';
      if (mode !== 'Auto' && mode !== 'Interactive')
        throw new SsmError('ValidationException', `Mode ${JSON.stringify(mode)} is not Auto or Interactive`);
      let settle!: () => void;
      const settled = new Promise<void>((done) => (settle = done));
      const execution: Execution = {
        id: randomUUID(),
        documentName: name,
        document,
        executedBy: caller,
        parameters,
        startTime: seconds(),
        mode,
        status: mode === 'Interactive' ? 'Waiting' : 'InProgress',
        steps: document.mainSteps.map((step) => ({
          StepName: step.name,
          Action: step.action,
          StepStatus: 'Pending',
          StepExecutionId: randomUUID(),
          Inputs: {},
        })),
        decisions: [],
        index: 0,
        settled,
        settle,
      };
      executions.set(execution.id, execution);
      if (mode === 'Auto') void advance(execution);
      return { AutomationExecutionId: execution.id };
    },
    SendAutomationSignal(input, caller) {
      const execution = find(input.AutomationExecutionId);
      const signal = String(input.SignalType ?? '');
      if (signal === 'StartStep') return startStep(execution, input.Payload);
      if (signal !== 'Approve' && signal !== 'Reject')
        throw new SsmError('InvalidAutomationSignalException', `signal ${signal} is not Approve or Reject`);
      const step = execution.steps[execution.index];
      if (!step || step.Action !== 'aws:approve' || step.StepStatus !== 'Waiting')
        throw new SsmError(
          'InvalidAutomationSignalException',
          `execution ${execution.id} is not waiting for approval`,
        );
      const inputs = resolve(execution.document.mainSteps[execution.index]!.inputs, execution) as {
        Approvers?: string[];
        MinRequiredApprovals?: number;
      };
      if (!(inputs.Approvers ?? []).some((approver) => isApprover(caller, approver)))
        throw new SsmError('InvalidAutomationSignalException', `${caller} is not an approver of this step`);
      if (execution.decisions.some((d) => d.Approver === caller))
        throw new SsmError('InvalidAutomationSignalException', `${caller} has already signalled this step`);
      const comment = ((input.Payload ?? {}) as Record<string, string[]>).Comment?.[0];
      execution.decisions.push({
        Approver: caller,
        Decision: signal,
        ApprovalDecisionTime: now().toISOString(),
        ...(comment !== undefined && { Comment: comment }),
      });
      const approvals = execution.decisions.filter((d) => d.Decision === 'Approve').length;
      const status =
        signal === 'Reject'
          ? 'Rejected'
          : approvals >= (inputs.MinRequiredApprovals ?? 1)
            ? 'Approved'
            : 'Waiting';
      step.Outputs = {
        ApprovalStatus: [status],
        ApproverDecisions: execution.decisions.map((d) => JSON.stringify(d)),
      };
      if (status === 'Waiting') return {};
      step.ExecutionEndTime = seconds();
      if (status === 'Rejected') {
        step.StepStatus = 'Failed';
        step.FailureMessage = `rejected by ${caller}`;
        end(execution, 'Failed');
      } else {
        step.StepStatus = 'Success';
        execution.index += 1;
        if (execution.mode === 'Interactive') {
          execution.status = 'Waiting';
          return {};
        }
        execution.status = 'InProgress';
        // The next steps run after this answer, as Automation resumes on its own.
        setImmediate(() => void advance(execution));
      }
      return {};
    },
    GetAutomationExecution(input) {
      const execution = find(input.AutomationExecutionId);
      const outputs: Record<string, string[]> = {};
      for (const step of execution.steps)
        for (const [key, values] of Object.entries(step.Outputs ?? {}))
          outputs[`${step.StepName}.${key}`] = values;
      const current = execution.steps[execution.index];
      return {
        AutomationExecution: {
          AutomationExecutionId: execution.id,
          DocumentName: execution.documentName,
          DocumentVersion: '1',
          ExecutionStartTime: execution.startTime,
          ...(execution.endTime !== undefined && { ExecutionEndTime: execution.endTime }),
          AutomationExecutionStatus: execution.status,
          StepExecutions: execution.steps,
          StepExecutionsTruncated: false,
          Parameters: execution.parameters,
          Outputs: outputs,
          Mode: execution.mode,
          ExecutedBy: execution.executedBy,
          ...(current && { CurrentStepName: current.StepName, CurrentAction: current.Action }),
        },
      };
    },
  };

  const server = createServer(
    jsonProtocol(TARGET_PREFIX, ({ body, target, operation, http, reply }) => {
      const handler = operation === undefined ? undefined : handlers[operation];
      try {
        const verified = verifySigV4({ ...http, body: body.toString('utf8') }, options.identities, now());
        if ('error' in verified) throw new SsmError(verified.code, verified.error);
        const caller = verified.identity.arn;
        if (!handler)
          throw new SsmError(
            'UnknownOperationException',
            `operation ${target || '(none)'} is not served locally`,
          );
        reply(200, handler(JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>, caller));
      } catch (error) {
        const known = error instanceof SsmError;
        const type = known ? error.type : 'InternalServerError';
        reply(known ? 400 : 500, { __type: type, message: (error as Error).message }, type);
      }
    }),
  );
  return {
    server,
    settled: (id) => find(id).settled,
    setCalendarState: (calendar, state) => void calendars.set(calendar, state),
  };
}

/** `{{name}}` parameters and `{{automation:EXECUTION_ID}}` replaced in every string of `value`. */
function resolve(value: unknown, execution: Execution): unknown {
  if (typeof value === 'string')
    return value.replace(/\{\{\s*([\w:.]+)\s*\}\}/g, (whole, name: string) => {
      if (name === 'automation:EXECUTION_ID') return execution.id;
      // <step>.<output>: an earlier step's output, as Automation substitutes it.
      const [stepName, output] = name.split('.');
      if (output !== undefined)
        return execution.steps.find((s) => s.StepName === stepName)?.Outputs?.[output]?.[0] ?? whole;
      return execution.parameters[name]?.join(',') ?? whole;
    });
  if (Array.isArray(value)) return value.map((item) => resolve(item, execution));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, execution)]));
  return value;
}

/**
 * Whether a verified principal is the approver named: the same ARN, the role of an assumed-role
 * session (`arn:aws:sts::<acct>:assumed-role/<role>/<session>` for `arn:aws:iam::<acct>:role/<path><role>`),
 * or an IAM user by name.
 */
export function isApprover(principal: string, approver: string): boolean {
  if (principal === approver) return true;
  const session = /^arn:(aws[\w-]*):sts::(\d{12}):assumed-role\/([^/]+)\/[^/]+$/.exec(principal);
  const role = /^arn:(aws[\w-]*):iam::(\d{12}):role\/(?:.*\/)?([^/]+)$/.exec(approver);
  if (session && role) return session[1] === role[1] && session[2] === role[2] && session[3] === role[3];
  const user = /^arn:aws[\w-]*:iam::\d{12}:user\/(?:.*\/)?([^/]+)$/.exec(principal);
  return user !== null && !approver.startsWith('arn:') && user[1] === approver;
}

/**
 * Runs an aws:executeScript step's Python script with python3 (Handler called with InputPayload as
 * `events`); rejects with the exception the script raised, as the step's failure.
 */
function runPythonScript(inputs: Record<string, unknown>): Promise<string> {
  if (!String(inputs.Runtime).startsWith('python3'))
    return Promise.reject(
      new Error(`the runtime ${String(inputs.Runtime)} is not served locally (python3.x is)`),
    );
  const harness = [
    'import json, sys',
    'scope = {}',
    'exec(sys.argv[1], scope)',
    'events = json.loads(sys.stdin.read())',
    'try:',
    '    result = scope[sys.argv[2]](events, None)',
    'except Exception as error:',
    '    sys.stderr.write(f"{type(error).__name__}: {error}")',
    '    sys.exit(1)',
    'print(json.dumps(result))',
  ].join('\n');
  return new Promise((resolveRun, reject) => {
    const python = spawn('python3', ['-c', harness, String(inputs.Script), String(inputs.Handler)]);
    let stdout = '';
    let stderr = '';
    python.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    python.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    python.on('error', reject);
    python.on('close', (code) =>
      code === 0 ? resolveRun(stdout.trim()) : reject(new Error(stderr.trim() || `python3 exited ${code}`)),
    );
    python.stdin.end(JSON.stringify(inputs.InputPayload ?? {}));
  });
}
