import { Command } from 'commander';
import { dirname, isAbsolute, resolve } from 'node:path';
import { checkHealthCheckExprs } from '../../functions/core/cel/check-config.ts';
import { loadConfigFile, type Delivery } from '../../functions/core/config/index.ts';
import { tableFromEnvironment } from '../../functions/core/environment.ts';
import { describeKept } from '../../functions/core/kube/cascade.ts';
import { deleteDelivery } from '../../functions/core/reconcile/delete.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';
import { getDelivery, listDeliveryNames, putDelivery } from '../../functions/core/store/deliveries.ts';
import { putGate } from '../../functions/core/store/gates.ts';
import { putRollout } from '../../functions/core/store/rollouts.ts';
import { getStatus, type DeliveryStatus } from '../../functions/core/store/status.ts';
import { formatInstant } from '../../functions/core/gates/messages.ts';
import { deliveriesExitCode } from './exit-codes.ts';
import { localReconcileDeps } from './local-runs.ts';
import { ago, EXIT, paintState, printJson, printTable, relative } from './output.ts';

const log = (message: string) => process.stderr.write(`${message}\n`);

/** A kubeconfig path in a config file is relative to that file, as a user reads it. */
function anchorKubeconfig(delivery: Delivery, configFile: string): Delivery {
  if (!('kubeconfig' in delivery.cluster) || isAbsolute(delivery.cluster.kubeconfig)) return delivery;
  return {
    ...delivery,
    cluster: { ...delivery.cluster, kubeconfig: resolve(dirname(configFile), delivery.cluster.kubeconfig) },
  };
}

export function registerCommand(): Command {
  return new Command('register')
    .description('Validate a config file and write its gate and delivery specs to the sluice table')
    .requiredOption('-f, --file <config.yaml>', 'the config file (gates and deliveries)')
    .option('--json', 'print the registered names as JSON')
    .addHelpText('after', '\nExample:\n  sluice register -f sluice.yaml')
    .action(async (opts: { file: string; json?: boolean }) => {
      const config = loadConfigFile(opts.file);
      checkHealthCheckExprs(config, opts.file);
      const db = tableFromEnvironment();
      for (const gate of config.gates) {
        await putGate(db, gate, new Date());
        if (!opts.json) process.stdout.write(`gate ${gate.name} registered\n`);
      }
      for (const delivery of config.deliveries) {
        await putDelivery(db, anchorKubeconfig(delivery, opts.file), new Date());
        if (!opts.json) process.stdout.write(`delivery ${delivery.name} registered\n`);
      }
      // After their deliveries: a rollout's members are deliveries of the same file.
      for (const rollout of config.rollouts) {
        await putRollout(db, rollout, new Date());
        if (!opts.json) process.stdout.write(`rollout ${rollout.name} registered\n`);
      }
      if (opts.json)
        printJson({
          gates: config.gates.map((g) => g.name),
          deliveries: config.deliveries.map((d) => d.name),
          ...(config.rollouts.length > 0 && { rollouts: config.rollouts.map((r) => r.name) }),
        });
    });
}

export function reconcileCommand(): Command {
  return new Command('reconcile')
    .description(
      'Run one reconcile of a delivery now, in this process (exit 1 failed, 3 skipped, 4 held by a gate or a dependency)',
    )
    .argument('<delivery>')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExample:\n  sluice reconcile oddy-test')
    .action(async (name: string, opts: { json?: boolean }) => {
      // Deliveries that were waiting on it (dependsOn, the next members of its rollout) follow it here.
      const deps = localReconcileDeps(log, (waiting) => `${waiting} (was waiting on it)`);
      const result = await reconcile(name, deps);
      if (opts.json) printJson(result);
      else {
        const counts = result.changes
          ? ` (${result.changes.created} created, ${result.changes.configured} configured, ${result.changes.unchanged} unchanged, ${result.changes.deleted} deleted)`
          : '';
        process.stdout.write(`${name}: ${result.outcome}: ${result.message}${counts}\n`);
      }
      process.exitCode = {
        Succeeded: EXIT.ok,
        Failed: EXIT.failed,
        Skipped: EXIT.skipped,
        Blocked: EXIT.blocked,
      }[result.outcome];
    });
}

/**
 * The status message, with how long a held delivery has waited (and, held by soaking dependencies,
 * how long remains) and when a failed one is retried.
 */
function statusMessage(status: Partial<DeliveryStatus>, now = Date.now()): string {
  const message = status.message ?? '';
  const soak =
    status.soakingUntil && Date.parse(status.soakingUntil) > now
      ? `; soak ends ${relative(status.soakingUntil, now)}, at ${formatInstant(status.soakingUntil)}`
      : '';
  if (status.blockedSince)
    return `${message} (held ${ago(status.blockedSince, now).replace(' ago', '')}${soak})`;
  if (status.nextRetryAt) return `${message} (retry at ${status.nextRetryAt})`;
  return message;
}

export function statusCommand(): Command {
  return new Command('status')
    .description('Show the status of one or every registered delivery')
    .argument('[delivery]')
    .option('--json', 'print the status as JSON')
    .option(
      '--exit-code',
      'exit 0 when every delivery shown is Ready, 4 when one is held or not yet reconciled, 1 when one failed',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  sluice status\n  sluice status oddy-test --json\n  sluice status oddy-test --exit-code',
    )
    .action(async (name: string | undefined, opts: { json?: boolean; exitCode?: boolean }) => {
      const db = tableFromEnvironment();
      const names = name ? [name] : await listDeliveryNames(db);
      if (name && !(await getDelivery(db, name))) throw new Error(`delivery '${name}' is not registered`);
      const recorded = await Promise.all(names.map((n) => getStatus(db, n)));
      if (opts.exitCode) process.exitCode = deliveriesExitCode(recorded);
      const statuses = recorded.map((status, index) => ({ delivery: names[index]!, ...status }));
      if (opts.json) {
        printJson(name ? statuses[0] : statuses);
        return;
      }
      printTable(
        ['DELIVERY', 'READY', 'REASON', 'REVISION', 'LAST RUN', 'MESSAGE'],
        statuses.map((s) => [
          s.delivery,
          s.ready === undefined ? 'Unknown' : s.ready ? 'True' : 'False',
          s.reason ?? 'NotReconciled',
          s.lastAppliedRevision
            ? `${s.lastAppliedRevision}${s.lastAppliedOriginRevision ? ` (${s.lastAppliedOriginRevision})` : ''}`
            : '-',
          ago(s.lastReconcileAt),
          statusMessage(s),
        ]),
        (text, column) => (column === 1 || column === 2 ? paintState(text) : text),
      );
      for (const s of statuses)
        if (s.lastAppliedSignedBy)
          process.stdout.write(
            `${s.delivery}: ${s.lastAppliedRevision ?? 'the applied revision'} signed by ${s.lastAppliedSignedBy.signer} (${s.lastAppliedSignedBy.provider})\n`,
          );
      for (const s of statuses)
        for (const kept of s.kept ?? [])
          process.stdout.write(
            `${s.delivery}: kept ${kept.container} (left out of the revision): it holds ${kept.objects.join(', ')}\n`,
          );
    });
}

export function unregisterCommand(): Command {
  return new Command('unregister')
    .description('Delete a delivery: its objects too (deletionPolicy Delete) or not (Orphan), then its spec')
    .argument('<delivery>')
    .option('--json', 'print what was deleted and kept as JSON')
    .addHelpText('after', '\nExample:\n  sluice unregister oddy-test')
    .action(async (name: string, opts: { json?: boolean }) => {
      // Deliveries that kept some of its objects take them over here, now.
      const deps = localReconcileDeps(log, (keeper) => `${keeper} (takes over objects of ${name})`);
      const result = await deleteDelivery(name, deps);
      if (opts.json) return printJson({ delivery: name, ...result });
      const skipped = result.skipped.map((s) => `\n  kept ${s.id}: ${s.reason}`).join('');
      const kept = result.kept.map((k) => `\n  kept ${k.id}: delivery '${k.delivery}' applies it`).join('');
      const held = result.containersKept.map((k) => `\n  kept ${k.id}: ${describeKept(k)}`).join('');
      process.stdout.write(
        result.policy === 'Delete'
          ? `delivery ${name} removed; ${result.deleted.length} objects deleted${kept}${held}${skipped}\n`
          : `delivery ${name} removed; its objects were orphaned (deletionPolicy: Orphan)\n`,
      );
    });
}
