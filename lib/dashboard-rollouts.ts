// A rollout's row on the dashboard, from what the functions already log: each reconcile line names
// the member's rollout (`rollout`), the gate function logs each halt, resume and rollback with
// who asked, and the reconcile function each halt it records.
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Rollout, RolloutWave } from '../functions/core/config/index.ts';
import { query, type ReconcileLogs } from './dashboard-widgets.ts';

/** `1 canary-* (soak 30m) → 2 eu-* (gate eu-approval)`: the waves as written. */
function wavesText(waves: readonly RolloutWave[]): string {
  return waves
    .map((wave, index) => {
      const details = [
        wave.gate && `gate \`${wave.gate}\``,
        wave.soakMs !== undefined && `soak ${Math.round(wave.soakMs / 60_000)} min`,
      ].filter(Boolean);
      const patterns = wave.patterns.map((pattern) => `\`${pattern}\``).join(', ');
      return `${index + 1}: ${patterns} (${wave.deliveries.length} ${wave.deliveries.length === 1 ? 'delivery' : 'deliveries'}${details.length > 0 ? `; ${details.join('; ')}` : ''})`;
    })
    .join(' → ');
}

/** A rollout's row: its waves, each member's latest run, members per applied revision, and its halts, resumes and rollbacks. */
export function rolloutWidgets(
  rollout: Rollout,
  reconcileLogs: ReconcileLogs,
  gateLogs: ReconcileLogs,
): cloudwatch.IWidget[] {
  const name = rollout.name;
  const members = `filter rollout = "${name}" and ispresent(outcome)`;
  return [
    new cloudwatch.TextWidget({
      markdown: [
        `### Rollout ${name}`,
        `Waves ${wavesText(rollout.waves)}; maxParallel ${rollout.maxParallel ?? 'the whole wave'}; a newer push ${rollout.supersede === 'wait' ? 'waits for this one' : 'restarts it'}.`,
        `Where it stands, who is held and what to do: \`sluice rollout status ${name}\`; \`sluice rollout halt|resume|rollback ${name} --reason … --function <gate function>\`.`,
      ].join('\n\n'),
      width: 24,
      height: 3,
    }),
    query(reconcileLogs, {
      title: `Rollout ${name}: members, latest run (RolloutWaiting: its wave or turn has not come; RolloutHalted: halted)`,
      lines: [
        members,
        'stats latest(outcome) as lastOutcome, latest(reason) as lastReason, latest(revision) as revision, max(@timestamp) as lastRun by delivery',
        'sort lastReason asc, delivery asc',
      ],
      view: cloudwatch.LogQueryVisualizationType.TABLE,
      width: 12,
    }),
    query(reconcileLogs, {
      title: `Rollout ${name}: members per revision applied`,
      lines: [
        `${members} and outcome = "Succeeded"`,
        'stats latest(revision) as applied by delivery',
        'stats count(*) as members by applied',
      ],
      view: cloudwatch.LogQueryVisualizationType.BAR,
      width: 6,
    }),
    query(reconcileLogs, {
      title: `Rollout ${name}: halts, resumes and rollbacks`,
      lines: [
        `filter (rollout = "${name}" and ispresent(action)) or @message like "rollout '${name}' halted"`,
        'fields @timestamp, action, by, message',
        'sort @timestamp desc',
        'limit 20',
      ],
      view: cloudwatch.LogQueryVisualizationType.TABLE,
      width: 6,
      alsoIn: [gateLogs],
    }),
  ];
}
