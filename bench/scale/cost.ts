// What sluice costs to run, from AWS list prices and the per-run counts `npm run scale` measures.

/** A list price and where it is published. */
export interface Price {
  readonly usd: number;
  readonly per: string;
  readonly url: string;
}

/**
 * us-east-1 list prices as AWS's pricing pages gave them in 2025 (DynamoDB's after its November
 * 2024 on-demand price cut), assumed unchanged on the date of the run; no free tier counted.
 */
export const PRICES = {
  lambdaGbSecond: {
    usd: 0.0000166667,
    per: 'GB-second (x86)',
    url: 'https://aws.amazon.com/lambda/pricing/',
  },
  lambdaRequest: { usd: 0.2 / 1e6, per: 'request', url: 'https://aws.amazon.com/lambda/pricing/' },
  dynamoWrite: {
    usd: 0.625 / 1e6,
    per: 'write request unit (on-demand)',
    url: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  dynamoRead: {
    usd: 0.125 / 1e6,
    per: 'read request unit (on-demand)',
    url: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  schedulerInvocation: {
    usd: 1 / 1e6,
    per: 'Scheduler invocation (after 14 million free a month)',
    url: 'https://aws.amazon.com/eventbridge/pricing/',
  },
  customEvent: {
    usd: 1 / 1e6,
    per: 'custom event put on a bus (ECR push events are free)',
    url: 'https://aws.amazon.com/eventbridge/pricing/',
  },
  alarm: { usd: 0.1, per: 'standard alarm-month', url: 'https://aws.amazon.com/cloudwatch/pricing/' },
  customMetric: { usd: 0.3, per: 'custom metric-month', url: 'https://aws.amazon.com/cloudwatch/pricing/' },
  logIngestion: { usd: 0.5, per: 'GB of logs ingested', url: 'https://aws.amazon.com/cloudwatch/pricing/' },
} as const satisfies Record<string, Price>;

/** What one steady-state reconcile uses, measured or assumed. */
export interface PerRun {
  /** Billed Lambda duration, seconds. */
  readonly lambdaSeconds: number;
  readonly memoryGb: number;
  readonly readUnits: number;
  readonly writeUnits: number;
  /** Events put on a bus: none at steady state (a run that changed nothing publishes none). */
  readonly busEvents: number;
  readonly logBytes: number;
}

/** The monitoring the construct makes, by mode. */
export interface Monitoring {
  readonly mode: 'perDelivery' | 'fleet';
}

/** Alarms and custom metrics: per delivery, and for the installation whatever its size. */
export function monitoringCounts(mode: Monitoring['mode']): {
  perDelivery: { alarms: number; metrics: number };
  fixed: { alarms: number; metrics: number };
} {
  // Errors, throttles and near-timeout for each of the three functions, and the failure queue.
  const functionAlarms = 3 * 3 + 1;
  // At steady state only ReconcileSucceeded and ReconcileCompleted are published.
  return mode === 'perDelivery'
    ? { perDelivery: { alarms: 3, metrics: 2 }, fixed: { alarms: functionAlarms, metrics: 0 } }
    : { perDelivery: { alarms: 0, metrics: 0 }, fixed: { alarms: functionAlarms + 3, metrics: 2 } };
}

export interface CostLine {
  readonly item: string;
  readonly usd: number;
}

/** Runs a month at an interval (730 hours, as AWS prices a month). */
export const runsPerMonth = (intervalMinutes: number) => (730 * 60) / intervalMinutes;

/** Dollars per delivery-month, by item, for `deliveries` deliveries reconciling every `intervalMinutes`. */
export function costPerDeliveryMonth(
  run: PerRun,
  options: {
    readonly deliveries: number;
    readonly intervalMinutes: number;
    readonly monitoring: Monitoring['mode'];
  },
): CostLine[] {
  const runs = runsPerMonth(options.intervalMinutes);
  const counts = monitoringCounts(options.monitoring);
  const share = (fixed: number) => fixed / options.deliveries;
  return [
    { item: 'Lambda duration', usd: runs * run.lambdaSeconds * run.memoryGb * PRICES.lambdaGbSecond.usd },
    { item: 'Lambda requests', usd: runs * PRICES.lambdaRequest.usd },
    { item: 'DynamoDB writes', usd: runs * run.writeUnits * PRICES.dynamoWrite.usd },
    { item: 'DynamoDB reads', usd: runs * run.readUnits * PRICES.dynamoRead.usd },
    { item: 'Scheduler invocations', usd: runs * PRICES.schedulerInvocation.usd },
    { item: 'EventBridge events', usd: runs * run.busEvents * PRICES.customEvent.usd },
    { item: 'CloudWatch Logs', usd: (runs * run.logBytes * PRICES.logIngestion.usd) / 2 ** 30 },
    {
      item: 'CloudWatch alarms',
      usd: (counts.perDelivery.alarms + share(counts.fixed.alarms)) * PRICES.alarm.usd,
    },
    {
      item: 'CloudWatch custom metrics',
      usd: (counts.perDelivery.metrics + share(counts.fixed.metrics)) * PRICES.customMetric.usd,
    },
  ];
}

export const total = (lines: readonly CostLine[]) => lines.reduce((sum, line) => sum + line.usd, 0);

/** What a number of runs used, measured (the Lambda time estimated from the runs' CPU and round trips). */
export interface RunsUse {
  readonly lambdaSeconds: number;
  readonly memoryGb: number;
  readonly invocations: number;
  readonly readUnits: number;
  readonly writeUnits: number;
  /** One-time schedules created (each fires once: a Scheduler invocation). */
  readonly schedules: number;
}

/** Dollars that a number of runs cost, by item (the table's units, Lambda, Scheduler). */
export function costOfRuns(use: RunsUse): CostLine[] {
  return [
    { item: 'Lambda duration', usd: use.lambdaSeconds * use.memoryGb * PRICES.lambdaGbSecond.usd },
    { item: 'Lambda requests', usd: use.invocations * PRICES.lambdaRequest.usd },
    { item: 'DynamoDB writes', usd: use.writeUnits * PRICES.dynamoWrite.usd },
    { item: 'DynamoDB reads', usd: use.readUnits * PRICES.dynamoRead.usd },
    { item: 'Scheduler invocations', usd: use.schedules * PRICES.schedulerInvocation.usd },
  ];
}
