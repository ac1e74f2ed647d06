import { Command } from 'commander';
import { devCommand } from './commands/dev.ts';

const program = new Command('sluice')
  .description(
    'Serverless GitOps delivery for Amazon EKS: OCI artifacts, server-side apply, prune and gates.',
  )
  .showHelpAfterError()
  .addCommand(devCommand());

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`sluice: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = process.exitCode || 1;
});
