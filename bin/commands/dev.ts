import { Command } from 'commander';
import { resolve } from 'node:path';
import { runningComponents, startComponents, stopComponents } from '../../dev/components.ts';

/** Where `dev up` keeps its state; SLUICE_DEV_DIR moves it (the demo uses its own). */
const DEV_DIR = process.env.SLUICE_DEV_DIR ?? '.sluice/dev';

export function devCommand(): Command {
  const dev = new Command('dev')
    .description(
      'Run the local components (kube-apiserver + etcd, OCI registry, DynamoDB Local, ECR API) in the background',
    )
    .addHelpText('after', '\nExample:\n  npx sluice dev up && . .sluice/dev/env && npx sluice dev down');
  dev
    .command('up')
    .description(
      'Start the local components (idempotent) and write .sluice/dev/kubeconfig and .sluice/dev/env',
    )
    .addHelpText('after', '\nExample:\n  npx sluice dev up && . .sluice/dev/env && kubectl get ns')
    .action(async () => {
      const dir = resolve(DEV_DIR);
      if (runningComponents(dir)) {
        process.stdout.write(`local components already running; use them with:  . ${DEV_DIR}/env\n`);
        return;
      }
      // Leftovers of a half-stopped run, or of a start that was interrupted.
      const leftovers = await stopComponents(dir);
      if (leftovers.length > 0)
        process.stdout.write(`stopped ${leftovers.join(', ')}, left running by an earlier start or stop\n`);
      const started = Date.now();
      const c = await startComponents(dir);
      process.stdout.write(
        [
          `local components up in ${((Date.now() - started) / 1000).toFixed(1)}s`,
          `  kube-apiserver  ${c.kube.server}`,
          `  registry        ${c.registry.host}`,
          `  DynamoDB Local  ${c.dynamodb.endpoint} (table ${c.dynamodb.table})`,
          `  ECR API         ${c.ecr.endpoint} (Secrets Manager too)`,
          `  KMS             ${c.kms.endpoint} (local-kms, test keys)`,
          `use them with:  . ${DEV_DIR}/env`,
          '',
        ].join('\n'),
      );
    });
  dev
    .command('down')
    .description('Stop the local components started by `sluice dev up`, by process id')
    .addHelpText('after', '\nExample:\n  npx sluice dev down')
    .action(async () => {
      const stopped = await stopComponents(resolve(DEV_DIR));
      process.stdout.write(
        stopped.length ? `stopped ${stopped.join(', ')}\n` : 'no local components were running\n',
      );
    });
  return dev;
}
