// `sluice rollback <delivery> [--to <revision>] --reason …`: signed to the gate function's
// rollbacks entry, back to a revision the delivery applied before.
import { Command, Option } from 'commander';
import { ROLLBACKS_ALIAS } from '../../functions/core/gates/contract.ts';
import {
  parseRollbackEvent,
  rollbackRequestDigest,
  type RollbackFields,
} from '../../functions/core/rollback/event.ts';
import { ROLLBACK_NEEDS_PROOF, type RollbackResult } from '../../functions/core/rollback/request.ts';
import { printJson } from './output.ts';
import { entryTarget, sendSigned } from './signed-gate-request.ts';

interface RollbackOptions {
  readonly to?: string;
  readonly reason?: string;
  readonly function?: string;
  readonly url?: string;
  readonly json?: boolean;
}

export function rollbackCommand(): Command {
  return new Command('rollback')
    .description(
      "Roll a delivery back to a revision it applied before (by digest, from its recorded history), through every closed gate that does not hold rollback. Signed with your AWS credentials (grantRollback); published and audited with your verified identity. A rollout's member is rolled back with sluice rollout rollback",
    )
    .argument('<delivery>', 'the delivery to roll back')
    .option(
      '--to <revision>',
      'the revision to return to: sha256:<hex> or <tag>@sha256:<hex>, one it applied (default: the one applied before the current)',
    )
    .option('--reason <text>', 'why (required): an incident or change ticket; audited and published')
    .addOption(
      new Option(
        '--function <name>',
        "the deployed gate function: the rollback is sent, signed, to its rollbacks entry's URL",
      ).env('SLUICE_GATE_FUNCTION'),
    )
    .option('--url <url>', "the rollbacks entry's function URL (then --function names the function's ARN)")
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  sluice rollback checkout --reason "INC-77: 5xx since 1.4.0" --function sluice-gate',
        '  sluice rollback checkout --to 1.3.1@sha256:<hex> --reason "INC-77" --function sluice-gate',
      ].join('\n'),
    )
    .action(async (delivery: string, opts: RollbackOptions) => {
      const fields: RollbackFields = {
        action: 'rollback',
        delivery,
        ...(opts.to !== undefined && { revision: opts.to }),
        ...(opts.reason !== undefined && { reason: opts.reason }),
      };
      // A bad request fails here, naming the field, before anything is signed or sent.
      parseRollbackEvent(fields as unknown as Record<string, unknown>);
      if (!opts.function && !opts.url)
        throw new Error(`${ROLLBACK_NEEDS_PROOF}; name the gate function with --function`);
      const entry = await entryTarget(opts.function, ROLLBACKS_ALIAS, 'the rollbacks entry', opts.url);
      const result = await sendSigned<RollbackResult>(
        entry,
        fields,
        rollbackRequestDigest(fields),
        `rollback of delivery '${delivery}'`,
      );
      if (opts.json) printJson(result);
      else process.stdout.write(`${result.message}\n`);
    });
}
