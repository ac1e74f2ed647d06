// `sluice rollout status <name>`: which wave, which delivery, why, and what to do; `sluice rollout
// halt|resume|rollback <name> --reason …`: signed to the gate function's rollouts entry with
// --function (the verified principal is recorded), or written here as a claim.
import { Command, Option } from 'commander';
import { userInfo } from 'node:os';
import {
  gateConditionReadersFromEnvironment,
  tableFromEnvironment,
} from '../../functions/core/environment.ts';
import {
  parseRolloutAction,
  rolloutActionDigest,
  ROLLOUTS_ALIAS,
  type RolloutActionFields,
  type RolloutActionKind,
} from '../../functions/core/gates/rollout-action-event.ts';
import {
  applyLocalRolloutAction,
  type RolloutActionResult,
} from '../../functions/core/reconcile/rollout-actions.ts';
import { readRolloutState } from '../../functions/core/reconcile/rollout-target.ts';
import { readablePrincipal } from '../../functions/core/access/caller.ts';
import type { RolloutAction } from '../../functions/core/model/rollout.ts';
import { rolloutSummary, type RolloutState } from '../../functions/core/rollout/state.ts';
import { getRollout, listRolloutActions } from '../../functions/core/store/rollouts.ts';
import { rolloutExitCode } from './exit-codes.ts';
import { localGateDeps } from './gates.ts';
import { printJson, printTable } from './output.ts';
import { entryTarget, sendSigned } from './signed-gate-request.ts';

/** The state as people read it: a summary, the halt and what to do, a row per member, then who acted on this revision. */
function printState(state: RolloutState, actions: readonly RolloutAction[]): void {
  process.stdout.write(`rollout ${state.rollout}: ${rolloutSummary(state)}\n`);
  const generation = state.generation;
  if (generation?.completedAt)
    process.stdout.write(
      `completed at ${generation.completedAt}: its members take it by themselves; a member failing since fails alone (its row below)\n`,
    );
  if (generation?.kind === 'rollback')
    process.stdout.write(
      `a rollback, started by ${readablePrincipal(generation.startedBy, generation.verified)}: ${generation.reason ?? ''}\n`,
    );
  if (state.halt) {
    const by = state.halt.by
      ? ` (recorded by ${readablePrincipal(state.halt.by, state.halt.verified)} at ${state.halt.at})`
      : '';
    process.stdout.write(
      `halted in wave ${state.halt.wave}${by}: ${state.halt.why}\nto do: ${state.halt.todo}\n`,
    );
  }
  printTable(
    ['WAVE', 'DELIVERY', 'PHASE', 'WHY'],
    state.waves.flatMap((wave) =>
      wave.members.map((member) => [
        `${wave.number} ${wave.phase}`,
        member.name,
        member.phase,
        member.why ?? '',
      ]),
    ),
  );
  const own = actions.filter((action) => action.generation === generation?.generation);
  if (own.length > 0)
    process.stdout.write(
      `\n${own.map((action) => `${action.at} ${action.action} by ${readablePrincipal(action.by, action.verified)}: ${action.reason}`).join('\n')}\n`,
    );
}

interface ActionOptions {
  readonly reason?: string;
  readonly by?: string;
  readonly function?: string;
  readonly url?: string;
  readonly json?: boolean;
}

const ACTION_HELP: Record<RolloutActionKind, string> = {
  halt: 'Halt a rollout: no member takes its revision any more (those that took it keep it), until a resume',
  resume: 'Resume a halted rollout: the failed members try the revision again and the waves go on',
  rollback:
    'Roll a rollout back: every member returns to the previous revision (the last the fleet completed) at once, and this revision is not rolled out again',
};

/** `sluice rollout <action> <name> --reason …`: signed to the rollouts entry with --function, else a local claim. */
function actionCommand(action: RolloutActionKind): Command {
  return new Command(action)
    .description(ACTION_HELP[action])
    .argument('<name>', 'the rollout')
    .option('--reason <text>', 'why (required): an incident or change ticket; kept in the audit trail')
    .option('--by <who>', 'locally: who is asking (recorded unverified); default: your OS user')
    .addOption(
      new Option(
        '--function <name>',
        "send the action, signed with your AWS credentials, to the gate function's rollouts entry (grantRolloutControl)",
      ).env('SLUICE_GATE_FUNCTION'),
    )
    .option('--url <url>', "the rollouts entry's function URL (then --function names the function's ARN)")
    .option('--json', 'print the result (the record and the state after it) as JSON')
    .addHelpText(
      'after',
      `\nExamples:\n  sluice rollout ${action} app --reason "INC-77" --function sluice-gate\n  sluice rollout ${action} app --reason "INC-77"   (locally: recorded unverified)`,
    )
    .action(async (name: string, opts: ActionOptions) => {
      const fields: RolloutActionFields = {
        rollout: name,
        action,
        ...(opts.reason !== undefined && { reason: opts.reason }),
      };
      // A bad action fails here, naming the field, before anything is signed, sent or written.
      const event = parseRolloutAction(fields as unknown as Record<string, unknown>);
      let result: RolloutActionResult;
      if (opts.function || opts.url) {
        if (opts.by !== undefined)
          throw new Error(
            '--by cannot be used with --function or --url: the gate function records your verified AWS identity',
          );
        const entry = await entryTarget(opts.function, ROLLOUTS_ALIAS, 'the rollouts entry', opts.url);
        result = await sendSigned<RolloutActionResult>(
          entry,
          fields,
          rolloutActionDigest(fields),
          `rollout '${name}': ${action}`,
        );
      } else result = await applyLocalRolloutAction(event, opts.by ?? userInfo().username, localGateDeps());
      if (opts.json) printJson(result);
      else process.stdout.write(`${result.message}\n`);
    });
}

export function rolloutCommand(): Command {
  const command = new Command('rollout').description(
    'Release waves: the state of a rollout; halt, resume or roll it back',
  );
  for (const action of ['halt', 'resume', 'rollback'] as const) command.addCommand(actionCommand(action));
  command
    .command('status')
    .description("A rollout's revision, its waves and members, and if halted: where, why and what to do")
    .argument('<name>', 'the rollout')
    .option('--json', 'print the state and the halt/resume/rollback audit trail as JSON')
    .option('--exit-code', 'exit 0 when complete (or idle), 4 while under way, 1 when halted')
    .action(async (name: string, opts: { json?: boolean; exitCode?: boolean }) => {
      const db = tableFromEnvironment();
      const rollout = await getRollout(db, name);
      if (!rollout) throw new Error(`rollout '${name}' is not registered (sluice register -f <config>)`);
      const state = await readRolloutState(
        rollout,
        { db, ...gateConditionReadersFromEnvironment() },
        new Date(),
      );
      const actions = await listRolloutActions(db, name);
      if (opts.exitCode) process.exitCode = rolloutExitCode(state.phase);
      if (opts.json) printJson({ ...state, mayTake: [...state.mayTake].sort(), actions });
      else printState(state, actions);
    });
  return command;
}
