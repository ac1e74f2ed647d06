import { Command, Option } from 'commander';
import { OVERRIDE_NEEDS_PROOF } from '../../functions/core/gates/event.ts';
import {
  overrideRequestDigest,
  parseOverrideEvent,
  type OverrideFields,
} from '../../functions/core/break-glass/override-event.ts';
import type { OverrideResult } from '../../functions/core/break-glass/override-request.ts';
import { BREAK_GLASS_ALIAS } from '../../functions/core/gates/override.ts';
import { printJson } from './output.ts';
import { entryTarget, sendSigned } from './signed-gate-request.ts';

interface OverrideOptions {
  readonly revision?: string;
  readonly for?: string;
  readonly reason?: string;
  readonly delivery?: string[];
  readonly allGates?: boolean;
  readonly function?: string;
  readonly url?: string;
  readonly json?: boolean;
}

/** `sluice gate override <gate>... --revision R --for 1h --reason …`: break-glass, signed, loud, bounded. */
export function overrideCommand(): Command {
  return new Command('override')
    .description(
      "Break-glass: let ONE pinned revision through closed gates for a bounded time (at most each gate's maxOverride, default 4h). Signed with your AWS credentials (grantBreakGlass); alarmed, published and audited as OVERRIDE. It never changes the gates, and never opens the mass-deletion brake",
    )
    .argument('[gates...]', 'the gates to let the revision through (or --all-gates --delivery <name>)')
    .option(
      '--revision <tag@sha256:digest>',
      'the one revision to let through (required; as sluice status shows it)',
    )
    .option('--for <duration>', "how long the override lasts (required; at most the gate's maxOverride)")
    .option(
      '--reason <text>',
      'why (required): an incident or change ticket; audited, and sent with the alarm',
    )
    .option(
      '--delivery <name>',
      'only for this delivery (repeat it for several); with --all-gates, the one delivery whose gates to override',
      (name: string, names: string[] = []) => [...names, name],
    )
    .option('--all-gates', "every gate in the delivery's gates (with one --delivery)")
    .addOption(
      new Option(
        '--function <name>',
        "the deployed gate function: the override is sent, signed, to its break_glass entry's URL",
      ).env('SLUICE_GATE_FUNCTION'),
    )
    .option('--url <url>', "the break_glass entry's function URL (then --function names the function's ARN)")
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  sluice gate override no-deploy-friday --revision 1.3.1@sha256:<hex> --for 1h --reason "INC-77 hotfix" --function sluice-gate',
        '  sluice gate override --all-gates --delivery checkout --revision 1.3.1@sha256:<hex> --for 30m --reason "INC-77" --function sluice-gate',
      ].join('\n'),
    )
    .action(async (gates: string[], opts: OverrideOptions) => {
      const fields: OverrideFields = {
        action: 'override',
        ...(gates.length > 0 && { gates }),
        ...(opts.allGates && { allGates: true }),
        ...(opts.delivery !== undefined && { deliveries: opts.delivery }),
        ...(opts.revision !== undefined && { revision: opts.revision }),
        ...(opts.for !== undefined && { window: opts.for }),
        ...(opts.reason !== undefined && { reason: opts.reason }),
      };
      // A bad request fails here, naming the field, before anything is signed or sent.
      parseOverrideEvent(fields as unknown as Record<string, unknown>);
      if (!opts.function && !opts.url)
        throw new Error(`${OVERRIDE_NEEDS_PROOF}; name the gate function with --function`);
      const entry = await entryTarget(opts.function, BREAK_GLASS_ALIAS, 'the break_glass entry', opts.url);
      const result = await sendSigned<OverrideResult>(
        entry,
        fields,
        overrideRequestDigest(fields),
        'break-glass override',
      );
      if (opts.json) printJson(result);
      else process.stdout.write(`${result.message}\n`);
    });
}
