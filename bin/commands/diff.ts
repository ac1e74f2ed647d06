import { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { reconcileDepsFromEnvironment } from '../../functions/core/environment.ts';
import { describeKept } from '../../functions/core/kube/cascade.ts';
import { diffDelivery, type DeliveryDiff } from '../../functions/core/reconcile/diff.ts';
import { colour, EXIT, printJson } from './output.ts';

const show = (value: unknown) => (value === undefined ? '(none)' : JSON.stringify(value));

function printDiff(diff: DeliveryDiff): void {
  const signed = (by: DeliveryDiff['signedBy']) => (by ? ` (signed by ${by.signer}, ${by.provider})` : '');
  const out: string[] = [`delivery ${diff.delivery} → ${diff.revision}${signed(diff.signedBy)}`];
  // Who signed what runs, beside who signed what would replace it (only for a verified source).
  if (diff.running && (diff.signedBy || diff.running.signedBy))
    out.push(`  running ${diff.running.revision}${signed(diff.running.signedBy)}`);
  for (const object of diff.create) out.push(colour.green(`+ create  ${object}`));
  for (const { object, fields } of diff.change) {
    out.push(colour.yellow(`~ change  ${object}`));
    for (const field of fields)
      out.push(
        field.redacted
          ? `      ${field.path}: (secret value changed)`
          : `      ${field.path}: ${show(field.before)} → ${show(field.after)}`,
      );
  }
  const kept = new Map(diff.kept.map((k) => [k.container, k]));
  for (const object of diff.prune) {
    const holding = kept.get(object);
    out.push(
      !diff.pruneEnabled
        ? `  keep    ${object} (no longer in the artifact; prune: false)`
        : holding
          ? colour.yellow(`  keep    ${describeKept(holding)}`)
          : colour.red(`- prune   ${object}`),
    );
  }
  for (const { object, owner } of diff.conflicts)
    out.push(colour.red(`! owned   ${object} belongs to delivery '${owner}' (the run would fail)`));
  out.push(`  ${diff.unchanged} unchanged`);
  if (diff.blockedMessage) out.push(colour.red(`! held: ${diff.blockedMessage}`));
  process.stdout.write(`${out.join('\n')}\n`);
}

export function diffCommand(): Command {
  return new Command('diff')
    .description(
      'What a reconcile would do now, without doing it: objects to create, change (fields from a server-side dry-run) and prune, and the gates that would hold it',
    )
    .argument('<delivery>')
    .option('--revision <tag|digest>', "compare this tag or sha256 digest instead of the source's")
    .option('--exit-code', 'exit 5 when a reconcile would change anything')
    .option('--json', 'print the diff as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  sluice diff oddy-test\n  sluice diff oddy-test --revision v2 --json',
    )
    .action(async (name: string, opts: { revision?: string; exitCode?: boolean; json?: boolean }) => {
      const deps = reconcileDepsFromEnvironment({ runId: `diff-${randomUUID()}` });
      const diff = await diffDelivery(name, deps, { revision: opts.revision });
      if (opts.json) printJson(diff);
      else printDiff(diff);
      const changes = diff.create.length + diff.change.length + (diff.pruneEnabled ? diff.prune.length : 0);
      if (opts.exitCode && changes > 0) process.exitCode = EXIT.changes;
    });
}
