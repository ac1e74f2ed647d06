// `sluice rollout status <name>`: which wave, which delivery, why, and what to do.
import { Command } from 'commander';
import {
  gateConditionReadersFromEnvironment,
  tableFromEnvironment,
} from '../../functions/core/environment.ts';
import { readRolloutState } from '../../functions/core/reconcile/rollout-target.ts';
import { rolloutSummary, type RolloutState } from '../../functions/core/rollout/state.ts';
import { getRollout, listRolloutActions } from '../../functions/core/store/rollouts.ts';
import { printJson, printTable } from './output.ts';

/** The state as people read it: a summary, the halt and what to do, then a row per member. */
function printState(state: RolloutState): void {
  process.stdout.write(`rollout ${state.rollout}: ${rolloutSummary(state)}\n`);
  if (state.halt) {
    const by = state.halt.by ? ` (recorded by ${state.halt.by} at ${state.halt.at})` : '';
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
}

export function rolloutCommand(): Command {
  const command = new Command('rollout').description('Release waves: the state of a rollout');
  command
    .command('status')
    .description("A rollout's revision, its waves and members, and if halted: where, why and what to do")
    .argument('<name>', 'the rollout')
    .option('--json', 'print the state and the halt/resume audit trail as JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const db = tableFromEnvironment();
      const rollout = await getRollout(db, name);
      if (!rollout) throw new Error(`rollout '${name}' is not registered (sluice register -f <config>)`);
      const state = await readRolloutState(
        rollout,
        { db, ...gateConditionReadersFromEnvironment() },
        new Date(),
      );
      if (opts.json)
        printJson({
          ...state,
          mayTake: [...state.mayTake].sort(),
          actions: await listRolloutActions(db, name),
        });
      else printState(state);
    });
  return command;
}
