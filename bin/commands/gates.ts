import { Command, Option } from 'commander';
import { userInfo } from 'node:os';
import { systemClock, type Clock } from '../../functions/core/clock.ts';
import { formatDuration, type GateAction } from '../../functions/core/config/index.ts';
import {
  gateConditionReadersFromEnvironment,
  tableFromEnvironment,
} from '../../functions/core/environment.ts';
import { printable } from '../../functions/core/access/audit-text.ts';
import { parseGateEvent } from '../../functions/core/gates/event.ts';
import { formatInstant, requestAuthors } from '../../functions/core/gates/messages.ts';
import { describeOverride } from '../../functions/core/gates/override.ts';
import {
  gateStatus,
  handleGateEvent,
  type GateDeps,
  type GateRequestResult,
} from '../../functions/core/gates/requests.ts';
import { listGateAudit, listGateNames, type GateAuditRecord } from '../../functions/core/store/gates.ts';
import { localReconcileDeps } from './local-runs.ts';
import { gateEntry, sendSignedGateRequest } from './signed-gate-request.ts';
import { overrideCommand } from './override.ts';
import { ago, paintState, printJson, printTable, relative } from './output.ts';
import { revisionText } from '../../functions/core/model/revision-text.ts';

const log = (message: string) => process.stderr.write(`${message}\n`);

function atOption(value: string): Clock {
  const at = Date.parse(value);
  if (Number.isNaN(at))
    throw new Error(`--at: "${value}" is not an ISO 8601 time (e.g. 2026-03-27T09:00:00Z)`);
  return { ...systemClock, now: () => new Date(at) };
}

export function gatesCommand(): Command {
  return new Command('gates')
    .description(
      'List gates: state, default, since, until, next scheduled change, last request, and break-glass overrides in force',
    )
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
      const readers = gateConditionReadersFromEnvironment();
      const gates = await Promise.all(names.map((name) => gateStatus(name, { db, clock, ...readers })));
      if (opts.json) {
        // The effective state first, as the table shows it; `status` is what the requests say.
        const json = gates.map(({ effective, ...report }) => ({
          name: report.status.name,
          state: effective.state,
          cause: effective.cause,
          why: effective.why,
          ...report,
        }));
        printJson(only ? json[0] : json);
        return;
      }
      const now = clock.now().getTime();
      printTable(
        ['GATE', 'STATE', 'DEFAULT', 'SINCE', 'UNTIL', 'NEXT CHANGE', 'LAST REQUEST'],
        gates.map(({ status, effective, nextChange, pendingApprovals }) => {
          const last = status.lastRequest;
          return [
            status.name,
            effective.cause === 'alarm'
              ? `closed (by ${effective.why})`
              : status.closedBy
                ? `closed (${effective.cause})`
                : effective.state,
            status.default,
            status.since ? ago(status.since, now) : '-',
            status.until ? relative(status.until, now) : '-',
            nextChange
              ? `${nextChange.state === 'open' ? 'opens' : 'closes'} ${relative(nextChange.at, now)} (${formatInstant(nextChange.at)}, ${nextChange.reason ? printable(nextChange.reason) : nextChange.cause})`
              : '-',
            last
              ? `${last.action}${last.action === 'open' ? ` for ${revisionText(last.revision, 'claimed')}` : ''} by ${requestAuthors(last)} ${ago(last.requestedAt, now)}${last.reason ? `: ${printable(last.reason)}` : ''}${pendingApprovals ? `; ${pendingApprovals.approvals.length} approval(s) pending` : ''}`
              : '-',
          ];
        }),
        (text, column) => (column === 1 ? paintState(text) : text),
      );
      for (const { status, overrides } of gates)
        for (const override of overrides ?? [])
          process.stdout.write(
            `OVERRIDE gate '${status.name}' (break-glass): lets ${describeOverride(override)} (ends ${relative(override.endsAt, now)})\n`,
          );
      for (const { status, holidays } of gates)
        if (holidays)
          process.stdout.write(
            `HOLIDAYS gate '${status.name}': ${holidays.set} ${holidays.types.join(', ')} (${holidays.timeZone}), from ${holidays.library}\n`,
          );
      for (const { warnings } of gates)
        for (const warning of warnings ?? []) process.stdout.write(`WARNING ${warning}\n`);
    });
}

/**
 * Gate dependencies for this process: opening a gate (or a rollout action) reconciles the
 * deliveries it concerns right here, and the runs they ask for (the next members of a rollout,
 * deliveries waiting on them) follow them here too.
 */
export function localGateDeps(): GateDeps {
  const deps = localReconcileDeps(log);
  return {
    db: deps.db,
    clock: deps.clock,
    alarmStates: deps.alarmStates,
    changeCalendarStates: deps.changeCalendarStates,
    reconcileNow: deps.reconcileNow,
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
    .option(
      '--revision <tag@sha256:digest>',
      'open for this revision only (as sluice status shows it); any other stays held',
    )
    .option(
      '--delivery <name>',
      'open for this delivery only (repeat it for several); the others using the gate stay held',
      (name: string, names: string[] = []) => [...names, name],
    )
    .option('--by <who>', 'locally: who is asking (recorded unverified); default: your OS user')
    .addOption(
      new Option(
        '--function <name>',
        "send the request, signed with your AWS credentials, to the deployed gate function's URL for this gate",
      ).env('SLUICE_GATE_FUNCTION'),
    )
    .option(
      '--url <url>',
      "the gate entry's function URL, instead of looking it up (then --function names the function's ARN)",
    )
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `\nExamples:\n  sluice gate ${action} sre-approval --for 1h --reason CHG-1234\n  sluice gate ${action} no-deploy-friday --function sluice-gate`,
    )
    .action(async (gate: string, opts: RequestOptions) => {
      const result =
        opts.function || opts.url
          ? await signedRequest(gate, action, opts)
          : await localRequest(gate, action, opts);
      if (opts.json) printJson(result);
      else process.stdout.write(`${result.message}\n`);
      if (result.outcome === 'stale') process.exitCode = 1;
    });
}

interface RequestOptions {
  readonly for?: string;
  readonly reason?: string;
  readonly revision?: string;
  readonly delivery?: string[];
  readonly by?: string;
  readonly function?: string;
  readonly url?: string;
  readonly json?: boolean;
}

/** Locally the CLI records the request itself; against a table in AWS that is worth a warning. */
async function localRequest(
  gate: string,
  action: GateAction,
  opts: RequestOptions,
): Promise<GateRequestResult> {
  const event = localEvent(gate, action, opts);
  if (!isLocalEndpoint(process.env.AWS_ENDPOINT_URL_DYNAMODB ?? process.env.AWS_ENDPOINT_URL))
    process.stderr.write(
      `sluice: warning: no --function: this ${action} is written straight to table '${process.env.SLUICE_TABLE ?? ''}' ` +
        `as an unverified claim by '${String(event.requestedBy)}'; against a deployed stack, give --stack <stack> ` +
        '(or --function <gate function>) so that the gate function records your verified AWS identity\n',
    );
  return handleGateEvent(parseGateEvent(event), localGateDeps());
}

/** Whether DynamoDB is reached on this machine (the local components), not in AWS. */
export function isLocalEndpoint(endpoint: string | undefined): boolean {
  if (endpoint === undefined) return false;
  try {
    return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(endpoint).hostname);
  } catch {
    return false;
  }
}

/** Locally the CLI is the recording side: the request is a claim by `--by` or the OS user. */
function localEvent(gate: string, action: GateAction, opts: RequestOptions): Record<string, unknown> {
  return {
    gate,
    action,
    source: 'cli',
    requestedBy: opts.by ?? userInfo().username,
    ...(opts.for !== undefined && { window: opts.for }),
    ...(opts.reason !== undefined && { reason: opts.reason }),
    ...(opts.revision !== undefined && { revision: opts.revision }),
    ...(opts.delivery !== undefined && { deliveries: opts.delivery }),
  };
}

/** Against a deployment: signed, so the function records who you are, not who you say you are. */
async function signedRequest(
  gate: string,
  action: GateAction,
  opts: RequestOptions,
): Promise<GateRequestResult> {
  if (opts.by !== undefined)
    throw new Error(
      '--by cannot be used with --function or --url: the gate function records your verified AWS identity',
    );
  const request = {
    gate,
    action,
    ...(opts.for !== undefined && { window: opts.for }),
    ...(opts.reason !== undefined && { reason: opts.reason }),
    ...(opts.revision !== undefined && { revision: opts.revision }),
    ...(opts.delivery !== undefined && { deliveries: opts.delivery }),
  };
  parseGateEvent(request, { signed: true }); // a bad request fails here, naming the field, before anything is sent
  return sendSignedGateRequest(await gateEntry(opts.function, gate, action, opts.url), request);
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
        ['REQUESTED AT', 'ACTION', 'REVISION', 'WINDOW', 'BY', 'SOURCE', 'OUTCOME', 'REASON'],
        records.map((r) => [
          formatInstant(r.requestedAt),
          r.action === 'override' ? 'OVERRIDE' : r.action,
          r.action === 'close' ? '-' : revisionText(r.revision, 'claimed'),
          r.windowMs === undefined ? '-' : formatDuration(r.windowMs),
          requestAuthors(r),
          r.source,
          r.outcome,
          reasonText(r),
        ]),
      );
    });
}

/** The request's reason; for a refused one, why it was refused after it. */
function reasonText(record: GateAuditRecord): string {
  const reason = record.reason ? printable(record.reason) : '-';
  return record.outcome === 'refused'
    ? `${reason} (refused: ${printable(record.refusedBecause ?? '-')})`
    : reason;
}

export function gateCommand(): Command {
  return new Command('gate')
    .description('Open or close a gate, override it (break-glass), or show its history')
    .addHelpText(
      'after',
      '\nExamples:\n  sluice gate open sre-approval --for 1h --reason CHG-1234\n  sluice gate history sre-approval',
    )
    .addCommand(requestCommand('open'))
    .addCommand(requestCommand('close'))
    .addCommand(overrideCommand())
    .addCommand(historyCommand());
}
