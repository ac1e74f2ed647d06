import type { Context } from 'aws-lambda';
import { kubectlApplyMix, type BenchContext } from '../context.ts';
import { pushFiles } from '../delivery.ts';
import { mixFiles } from '../mix.ts';
import type { BenchOutcome } from '../report.ts';
import { formatMs, formatRatio, median, spread, timed } from '../stats.ts';
import { APPLY_COUNT, type ApplyRound } from './apply.ts';

const PUSHES = 3;
const TARGET_MS = 10_000;

export interface PushResult {
  readonly outcome: BenchOutcome;
  /** The mix revision the delivery holds now. */
  readonly revision: number;
}

/**
 * Push → applied: a new revision of round 1's artifact (one ConfigMap changed) is pushed, then the
 * reconcile handler is called with the "ECR Image Action" event EventBridge would deliver for it.
 * Timed from the start of the push to the handler's answer (the change applied, status written).
 */
export async function pushBench(ctx: BenchContext, applied: ApplyRound): Promise<PushResult> {
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  const { handler } = await import('../../functions/reconcile/handler.ts');
  const runs: { total: number; push: number; handler: number }[] = [];
  let revision = 1;
  for (let i = 0; i < PUSHES; i++) {
    revision++;
    const files = mixFiles({ count: APPLY_COUNT, prefix: applied.sluicePrefix, revision });
    const started = performance.now();
    const pushed = await timed(() => pushFiles(ctx.components, applied.repository, 'main', files));
    const event = {
      version: '0',
      id: `bench-${i}`,
      source: 'aws.ecr' as const,
      'detail-type': 'ECR Image Action' as const,
      account: '123456789012',
      time: new Date().toISOString(),
      region: ctx.components.region,
      resources: [],
      detail: {
        'action-type': 'PUSH',
        result: 'SUCCESS',
        'repository-name': applied.repository,
        'image-digest': pushed.result,
        'image-tag': 'main',
      },
    };
    const handled = await timed(() => handler(event, { awsRequestId: `bench-push-${i}` } as Context));
    const total = performance.now() - started;
    const results = Array.isArray(handled.result) ? handled.result : [];
    const result = results.find((r) => r.delivery === applied.delivery);
    if (result?.outcome !== 'Succeeded' || result.changes?.configured !== 1)
      throw new Error(`the push event did not apply the one change: ${JSON.stringify(handled.result)}`);
    runs.push({ total, push: pushed.ms, handler: handled.ms });
  }
  // The reference: what a CI job would run after the push, kubectl applying the changed artifact's files.
  const reference = await timed(() =>
    kubectlApplyMix(
      ctx,
      mixFiles({ count: APPLY_COUNT, prefix: applied.kubectlPrefix, revision: 2 }),
      applied.kubectlPrefix,
    ),
  );
  const total = median(runs.map((r) => r.total));
  return {
    revision,
    outcome: {
      targets: [
        {
          benchmark: '4. Push → applied (ECR event path, local)',
          sluice: formatMs(total),
          reference: `${formatMs(reference.ms)} (kubectl apply of the changed files)`,
          ratio: `${formatRatio(reference.ms / total)} faster`,
          target: `≤ ${formatMs(TARGET_MS)}`,
          holds: total <= TARGET_MS,
        },
      ],
      sections: [
        {
          title: '4. Push → applied',
          method:
            `Round 1's delivery (${APPLY_COUNT.toLocaleString('en')} objects) gets a new revision with one ConfigMap ` +
            'changed: `pushArtifact` to the local registry through the ECR token path, then the reconcile handler ' +
            '(functions/reconcile/handler.ts, imported in this process) is called with the "ECR Image Action" PUSH ' +
            "event EventBridge delivers. Timed from the start of the push to the handler's answer, by which the change " +
            `is applied and the status written; ${PUSHES} pushes.`,
          table: {
            header: ['', 'time'],
            rows: [
              ['push → applied', spread(runs.map((r) => r.total))],
              ['of it: the push', spread(runs.map((r) => r.push))],
              [
                'of it: the handler (find deliveries, reconcile 1 change in 1,000)',
                spread(runs.map((r) => r.handler)),
              ],
              ['reference: kubectl apply --server-side of the changed files', formatMs(reference.ms)],
            ],
          },
          notes: [
            "The reference is what a CI job would run after the push: the layer's kubectl applying the same " +
              `${APPLY_COUNT.toLocaleString('en')} objects' files (its own copy of round 1's objects, one ConfigMap ` +
              'changed), as in benchmark 1.',
            "Not included, because nothing local can stand for them: EventBridge's delivery of the ECR event " +
              "(typically under a second) and a Lambda cold start (see benchmark 5 for the handler's own init).",
          ],
        },
      ],
    },
  };
}
