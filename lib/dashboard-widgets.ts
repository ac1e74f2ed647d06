// The widgets of the sluice dashboard, per delivery and per gate, from what the functions already
// write: the reconcile function's metrics and log lines (`reconciled: …` with delivery, outcome,
// appliedRevision (what runs), heldRevision (what waits, `-` when none), changes, durationMs,
// secondsSinceSuccess; `release waiting: …`) and the gate function's GateState (read on a
// schedule), GateOpen (at requests) and PendingApprovals metrics.
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Delivery, Gate } from '../functions/core/config/index.ts';
import { GATE_METRICS, GATE_STATE_RATE_MINUTES } from '../functions/gate/metrics.ts';
import { RELEASE_WAITING_LOG_PREFIX } from '../functions/core/reconcile/events.ts';
import { RECONCILE_METRICS } from '../functions/reconcile/metrics.ts';
import { deliveryMetric } from './alarms.ts';

/** Where the reconcile function logs. */
export interface ReconcileLogs {
  readonly logGroupName: string;
}

/** One Logs Insights widget: its title, query lines, how it shows them, and its size (12 × 6 unless told). */
export interface LogQuery {
  readonly title: string;
  readonly lines: string[];
  readonly view: cloudwatch.LogQueryVisualizationType;
  readonly width?: number;
  readonly height?: number;
  /** Log groups queried besides the reconcile function's (the gate function's). */
  readonly alsoIn?: readonly ReconcileLogs[];
}

export const query = (
  logs: ReconcileLogs,
  { title, lines, view, width = 12, height = 6, alsoIn = [] }: LogQuery,
) =>
  new cloudwatch.LogQueryWidget({
    title,
    logGroupNames: [logs.logGroupName, ...alsoIn.map((group) => group.logGroupName)],
    queryLines: lines,
    view,
    width,
    height,
  });

/** The latest run of each delivery: outcome, reason, revision, seconds since its last success. */
export function deliveriesTable(logs: ReconcileLogs, height: number): cloudwatch.IWidget {
  return query(logs, {
    title:
      'Deliveries: latest run (outcome, revision applied and revision held, seconds since the last success)',
    lines: [
      'filter ispresent(outcome) and ispresent(delivery)',
      'stats latest(outcome) as lastOutcome, latest(reason) as lastReason, latest(appliedRevision) as applied, latest(heldRevision) as held, latest(secondsSinceSuccess) as secondsSinceSuccess, max(@timestamp) as lastRun by delivery',
      'sort delivery asc',
    ],
    view: cloudwatch.LogQueryVisualizationType.TABLE,
    width: 24,
    height,
  });
}

/** A delivery's row: latest run, outcomes over time, run durations, objects applied and pruned. */
export function deliveryWidgets(
  delivery: Delivery,
  logs: ReconcileLogs,
  fleet: boolean,
): cloudwatch.IWidget[] {
  const name = delivery.name;
  const runs = `filter delivery = "${name}" and ispresent(outcome)`;
  const widgets: cloudwatch.IWidget[] = [
    query(logs, {
      title: `Delivery ${name}: latest run`,
      lines: [
        runs,
        'stats latest(outcome) as lastOutcome, latest(reason) as lastReason, latest(appliedRevision) as applied, latest(heldRevision) as held, latest(secondsSinceSuccess) as secondsSinceSuccess, max(@timestamp) as lastRun',
      ],
      view: cloudwatch.LogQueryVisualizationType.TABLE,
      width: 12,
      height: 3,
    }),
    query(logs, {
      title: `Delivery ${name}: latest runs`,
      lines: [
        runs,
        'fields @timestamp, outcome, reason, appliedRevision, heldRevision',
        'sort @timestamp desc',
        'limit 5',
      ],
      view: cloudwatch.LogQueryVisualizationType.TABLE,
      width: 12,
      height: 3,
    }),
    fleet
      ? query(logs, {
          title: `Delivery ${name}: outcomes`,
          lines: [runs, 'stats count(*) as runs by outcome, bin(1h)'],
          view: cloudwatch.LogQueryVisualizationType.BAR,
        })
      : new cloudwatch.GraphWidget({
          title: `Delivery ${name}: outcomes and time held`,
          width: 12,
          height: 6,
          left: [
            deliveryMetric(RECONCILE_METRICS.succeeded, delivery, { statistic: 'Sum', label: 'succeeded' }),
            deliveryMetric(RECONCILE_METRICS.failed, delivery, { statistic: 'Sum', label: 'failed' }),
            deliveryMetric(RECONCILE_METRICS.blocked, delivery, { statistic: 'Sum', label: 'held' }),
          ],
          right: [
            deliveryMetric(RECONCILE_METRICS.blockedSeconds, delivery, {
              statistic: 'Maximum',
              label: 'held for (s)',
            }),
          ],
        }),
    query(logs, {
      title: `Delivery ${name}: run duration (ms)`,
      lines: [
        `${runs} and ispresent(durationMs)`,
        'stats avg(durationMs) as average, max(durationMs) as longest by bin(15m)',
      ],
      view: cloudwatch.LogQueryVisualizationType.LINE,
    }),
    query(logs, {
      title: `Delivery ${name}: objects applied and pruned`,
      lines: [
        `${runs} and ispresent(changes.created)`,
        'stats sum(changes.created) as created, sum(changes.configured) as configured, sum(changes.deleted) as pruned by bin(1h)',
      ],
      view: cloudwatch.LogQueryVisualizationType.BAR,
      width: 24,
    }),
  ];
  return widgets;
}

const gateMetric = (metricName: string, gate: Gate, statistic: string, label: string) =>
  new cloudwatch.Metric({
    namespace: GATE_METRICS.namespace,
    metricName,
    dimensionsMap: { service: GATE_METRICS.service, [GATE_METRICS.dimension]: gate.name },
    period: Duration.minutes(5),
    statistic,
    label,
  });

/**
 * A gate's row: open or closed as deliveries meet it (GateState, read on a schedule: alarms,
 * freezes, calendars included), its requests (and, for a gate that gathers approvals from more
 * than one person, those pending), the releases that came to wait at it.
 */
export function gateWidgets(gate: Gate, logs: ReconcileLogs): cloudwatch.IWidget[] {
  const gathers = gate.approvers > 1;
  return [
    new cloudwatch.GraphWidget({
      title: `Gate ${gate.name}: open (1) or closed (0), alarms, freezes and calendars included (read every ${GATE_STATE_RATE_MINUTES} min)`,
      width: 8,
      height: 6,
      // Closed at any read of the period shows as closed.
      left: [gateMetric(GATE_METRICS.state, gate, 'Minimum', 'open')],
      leftYAxis: { min: 0, max: 1 },
    }),
    new cloudwatch.GraphWidget({
      title: gathers ? `Gate ${gate.name}: requests and pending approvals` : `Gate ${gate.name}: requests`,
      width: 8,
      height: 6,
      left: [gateMetric(GATE_METRICS.open, gate, 'SampleCount', 'requests')],
      ...(gathers && {
        right: [
          gateMetric(
            GATE_METRICS.pendingApprovals,
            gate,
            'Maximum',
            `approvals pending (of ${gate.approvers})`,
          ),
        ],
      }),
    }),
    query(logs, {
      title: `Gate ${gate.name}: releases that came to wait at it`,
      lines: [
        `filter message like "${RELEASE_WAITING_LOG_PREFIX}" and message like "gate '${gate.name}'"`,
        'fields @timestamp, message',
        'sort @timestamp desc',
        'limit 20',
      ],
      view: cloudwatch.LogQueryVisualizationType.TABLE,
      width: 8,
    }),
  ];
}
