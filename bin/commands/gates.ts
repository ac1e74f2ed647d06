import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { Command, Option } from 'commander';
import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { systemClock, type Clock } from '../../functions/core/clock.ts';
import { formatDuration, type GateAction } from '../../functions/core/config/index.ts';
import { reconcileDepsFromEnvironment, tableFromEnvironment } from '../../functions/core/environment.ts';
import { parseGateEvent } from '../../functions/core/gates/event.ts';
import { formatInstant } from '../../functions/core/gates/messages.ts';
import {
  gateStatus,
  handleGateEvent,
  type GateDeps,
  type GateRequestResult,
} from '../../functions/core/gates/requests.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';
import { listGateAudit, listGateNames } from '../../functions/core/store/gates.ts';
import { ago, paintState, printJson, printTable, relative } from './output.ts';

const log = (message: string) => process.stderr.write(`${message}\n`);

/** Who is asking: the caller's AWS identity when the table is in AWS, the OS user on local components. */
async function callerIdentity(): Promise<string> {
  if (process.env.AWS_ENDPOINT_URL_DYNAMODB || process.env.AWS_ENDPOINT_URL) return userInfo().username;
  const { Arn } = await new STSClient({}).send(new GetCallerIdentityCommand({}));
  return Arn ?? userInfo().username;
}

function atOption(value: string): Clock {
  const at = Date.parse(value);
  if (Number.isNaN(at))
    throw new Error(`--at: "${value}" is not an ISO 8601 time (e.g. 2026-03-27T09:00:00Z)`);
  return { now: () => new Date(at) };
}

export function gatesCommand(): Command {
  return new Command('gates')
    .description('List gates: state, default, since, until, next scheduled change, last request')
    .argument('[gate]', 'only this gate')
    .option('--at <time>', 'evaluate at this time instead of now (ISO 8601), to plan ahead')
    .option('--json', 'print as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  sluice gates\n  sluice gates no-deploy-friday --at 2026-03-27T09:00:00Z --json',
    )
    .action(async (only: string | undefined, opts: { at?: string; json?: boolean }) => {
      const clock = opts.at ? atOption(opts.at) : systemClock;
      const db = tableFromEnvironment();
      const names = only ? [only] : (await listGateNames(db)).sort();
      const gates = await Promise.all(names.map((name) => gateStatus(name, { db, clock })));
      if (opts.json) {
        printJson(only ? gates[0] : gates);
        return;
      }
      const now = clock.now().getTime();
      printTable(
        ['GATE', 'STATE', 'DEFAULT', 'SINCE', 'UNTIL', 'NEXT CHANGE', 'LAST REQUEST'],
        gates.map(({ status, nextChange }) => {
          const last = status.lastRequest;
          return [
            status.name,
            status.state,
            status.default,
            status.since ? ago(status.since, now) : '-',
            status.until ? relative(status.until, now) : '-',
            nextChange
              ? `${nextChange.state === 'open' ? 'opens' : 'closes'} ${relative(nextChange.at, now)} (${formatInstant(nextChange.at)}, ${nextChange.cause})`
              : '-',
            last
              ? `${last.action} by ${last.requestedBy} ${ago(last.requestedAt, now)}${last.reason ? `: ${last.reason}` : ''}`
              : '-',
          ];
        }),
        (text, column) => (column === 1 ? paintState(text) : text),
      );
    });
}

/** Sends the request to the deployed gate function (which reconciles in AWS), and returns its answer. */
async function invokeGateFunction(
  functionName: string,
  event: Record<string, unknown>,
): Promise<GateRequestResult> {
  const response = await new LambdaClient({}).send(
    new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(event)) }),
  );
  const payload = JSON.parse(Buffer.from(response.Payload ?? []).toString('utf8') || 'null') as unknown;
  if (response.FunctionError) {
    const message = (payload as { errorMessage?: string } | null)?.errorMessage ?? JSON.stringify(payload);
    throw new Error(`gate function ${functionName}: ${message}`);
  }
  return payload as GateRequestResult;
}

/** Gate dependencies for this process: opening a gate reconciles the deliveries using it right here. */
export function localGateDeps(): GateDeps {
  const deps = reconcileDepsFromEnvironment({ runId: `cli-${randomUUID()}`, log });
  return {
    db: deps.db,
    clock: deps.clock,
    reconcileNow: async (deliveries) => {
      for (const delivery of deliveries) {
        const result = await reconcile(delivery, { ...deps, runId: `cli-${randomUUID()}` });
        log(`${delivery}: ${result.outcome}: ${result.message}`);
      }
    },
  };
}

function requestCommand(action: GateAction): Command {
  const verb = action === 'open' ? 'Open' : 'Close';
  return new Command(action)
    .description(
      `${verb} a gate (for its window, or --for); ${action === 'open' ? 'deliveries waiting on it reconcile at once' : 'deliveries behind it are held'}`,
    )
    .argument('<gate>')
    .option('--for <duration>', "how long the request lasts (e.g. 2h); default: the gate's window")
    .option('--reason <text>', 'why, recorded in the audit trail (e.g. a change ticket)')
    .option('--by <who>', 'who is asking; default: your AWS identity (STS) or, locally, your OS user')
    .addOption(
      new Option('--function <name>', 'send the request to the deployed gate function').env(
        'SLUICE_GATE_FUNCTION',
      ),
    )
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `\nExamples:\n  sluice gate ${action} sre-approval --for 1h --reason CHG-1234\n  sluice gate ${action} no-deploy-friday --function sluice-gate`,
    )
    .action(
      async (
        gate: string,
        opts: { for?: string; reason?: string; by?: string; function?: string; json?: boolean },
      ) => {
        const event = {
          gate,
          action,
          source: 'cli',
          requestedBy: opts.by ?? (await callerIdentity()),
          ...(opts.for !== undefined && { window: opts.for }),
          ...(opts.reason !== undefined && { reason: opts.reason }),
        };
        const result = opts.function
          ? await invokeGateFunction(opts.function, event)
          : await handleGateEvent(parseGateEvent(event), localGateDeps());
        if (opts.json) printJson(result);
        else process.stdout.write(`${result.message}\n`);
        if (result.outcome === 'stale') process.exitCode = 1;
      },
    );
}

function historyCommand(): Command {
  return new Command('history')
    .description(
      "A gate's audit trail, newest first: who asked, when, why, from where, and what became of it",
    )
    .argument('<gate>')
    .option('-n, --limit <count>', 'how many records', '20')
    .option('--json', 'print as JSON')
    .addHelpText('after', '\nExample:\n  sluice gate history sre-approval -n 5')
    .action(async (gate: string, opts: { limit: string; json?: boolean }) => {
      const db = tableFromEnvironment();
      await gateStatus(gate, { db, clock: systemClock }); // fails clearly for an unknown gate
      const records = await listGateAudit(db, gate, Math.max(1, Number.parseInt(opts.limit, 10) || 20));
      if (opts.json) {
        printJson(records);
        return;
      }
      printTable(
        ['REQUESTED AT', 'ACTION', 'WINDOW', 'BY', 'SOURCE', 'OUTCOME', 'REASON'],
        records.map((r) => [
          formatInstant(r.requestedAt),
          r.action,
          r.windowMs === undefined ? '-' : formatDuration(r.windowMs),
          r.requestedBy,
          r.source,
          r.outcome,
          r.reason || '-',
        ]),
      );
    });
}

export function gateCommand(): Command {
  return new Command('gate')
    .description('Open or close a gate, or show its history')
    .addHelpText(
      'after',
      '\nExamples:\n  sluice gate open sre-approval --for 1h --reason CHG-1234\n  sluice gate history sre-approval',
    )
    .addCommand(requestCommand('open'))
    .addCommand(requestCommand('close'))
    .addCommand(historyCommand());
}
