import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Command, Option } from 'commander';
import {
  registerCommand,
  reconcileCommand,
  statusCommand,
  unregisterCommand,
} from './commands/deliveries.ts';
import { devCommand } from './commands/dev.ts';
import { diffCommand } from './commands/diff.ts';
import { gateCommand, gatesCommand } from './commands/gates.ts';
import { pushCommand } from './commands/push.ts';
import { rollbackCommand } from './commands/rollback.ts';
import { rolloutCommand } from './commands/rollout.ts';
import { configuredRegion, useStackOutputs } from './commands/stack.ts';
import { packageVersion } from './version.ts';

// `sluice status | head` closes the pipe early: stop writing, quietly, as other CLIs do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

const program = new Command('sluice')
  .description(
    'Serverless GitOps delivery for Amazon EKS: OCI artifacts, server-side apply, prune and gates.',
  )
  .addHelpText('after', '\nAgainst a deployed stack:\n  sluice --stack <stack name> status')
  .version(packageVersion(), '-V, --version', 'print the version of sluice')
  .showHelpAfterError()
  .addOption(
    new Option(
      '--stack <name>',
      'a deployed stack with a Sluice: its outputs name the table and the gate function (SLUICE_TABLE and --function still win)',
    ).env('SLUICE_STACK'),
  )
  .addOption(
    new Option(
      '--export-prefix <prefix>',
      "with --stack: the Sluice's exportPrefix, when it sets one (default: the stack's name)",
    ).env('SLUICE_EXPORT_PREFIX'),
  )
  .hook('preSubcommand', async (root, subcommand) => {
    const { stack, exportPrefix } = root.opts<{ stack?: string; exportPrefix?: string }>();
    // The local components and pushing an artifact need no stack.
    if (['dev', 'push'].includes(subcommand.name())) return;
    if (stack) await useStackOutputs(stack, exportPrefix);
    else if (process.env.SLUICE_TABLE)
      await configuredRegion(new DynamoDBClient({}), `reach table '${process.env.SLUICE_TABLE}'`);
  })
  .addCommand(pushCommand())
  .addCommand(registerCommand())
  .addCommand(reconcileCommand())
  .addCommand(statusCommand())
  .addCommand(diffCommand())
  .addCommand(unregisterCommand())
  .addCommand(gatesCommand())
  .addCommand(gateCommand())
  .addCommand(rollbackCommand())
  .addCommand(rolloutCommand())
  .addCommand(devCommand());

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`sluice: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = process.exitCode || 1;
});
