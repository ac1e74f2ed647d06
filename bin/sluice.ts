import { Command } from 'commander';
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
import { rolloutCommand } from './commands/rollout.ts';
import { packageVersion } from './version.ts';

const program = new Command('sluice')
  .description(
    'Serverless GitOps delivery for Amazon EKS: OCI artifacts, server-side apply, prune and gates.',
  )
  .version(packageVersion(), '-V, --version', 'print the version of sluice')
  .showHelpAfterError()
  .addCommand(pushCommand())
  .addCommand(registerCommand())
  .addCommand(reconcileCommand())
  .addCommand(statusCommand())
  .addCommand(diffCommand())
  .addCommand(unregisterCommand())
  .addCommand(gatesCommand())
  .addCommand(gateCommand())
  .addCommand(rolloutCommand())
  .addCommand(devCommand());

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`sluice: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = process.exitCode || 1;
});
