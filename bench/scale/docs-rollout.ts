// The "A rollout over the fleet" section of docs/scale.md, from the rollout phase of `npm run scale`.
import { table } from '../report.ts';
import { formatMs } from '../stats.ts';
import { PRICES, runsPerMonth } from './cost.ts';
import { peaks, phaseCost, sum, usd } from './docs.ts';
import type { RolloutRun, RolloutStep } from './rollout.ts';
import type { Phase, ScaleResult } from './simulate.ts';

const WAVE_NAMES = ['canary-*', 'eu-*', "'*'"];
/** The rollout's size that `npm run scale` runs by default. */
const FULL_FLEET = 1000;

/** `v1 wave 2 (eu-*, 240 members): the soak of wave 1 ends`, and so on. */
export function stepLabel(step: RolloutStep, run: RolloutRun): string {
  const wave = `wave ${step.wave} (${WAVE_NAMES[step.wave - 1]}, ${run.waveSizes[step.wave - 1]})`;
  if (step.kind === 'soak')
    return `${step.revision} soak of wave ${step.wave}: an interval run of every member`;
  if (step.kind === 'halted') return `${step.revision} after the halt: an interval run of every member`;
  return step.wave === 1
    ? `${step.revision} ${wave}: pushed, the push event fans out to every member`
    : `${step.revision} ${wave}: the soak of wave ${step.wave - 1} ends`;
}

const perRun = (phase: Phase, n: number) => (phase.runs === 0 ? '—' : (n / phase.runs).toFixed(1));

function stepRow(step: RolloutStep, run: RolloutRun): string[] {
  const p = step.phase;
  return [
    stepLabel(step, run),
    String(p.runs),
    formatMs(p.ms),
    Object.entries(p.outcomes)
      .map(([outcome, n]) => `${n} ${outcome}`)
      .join(', '),
    perRun(p, sum(p.table.requests)),
    perRun(p, p.table.readUnits),
    perRun(p, p.table.writeUnits),
    perRun(p, sum(p.apiRequests)),
    peaks(p.peakInFlight),
    String(step.atRevision),
    usd(phaseCost(p)),
  ];
}

/** The steps that move members (the waves), not the interval runs during soaks or after the halt. */
const wavesOf = (run: RolloutRun, revision: string) =>
  run.steps.filter((step) => step.revision === revision && step.kind === 'wave');
const totalOf = (steps: readonly RolloutStep[], of: (p: Phase) => number) =>
  steps.reduce((a, step) => a + of(step.phase), 0);

const skipped = (steps: readonly RolloutStep[]) =>
  totalOf(steps, (p) => p.outcomes.Skipped ?? 0).toLocaleString('en');

export function rolloutSection(result: ScaleResult): string[] {
  const run = result.rollout;
  if (!run) return [];
  const n = run.members.toLocaleString('en');
  const v1 = wavesOf(run, 'v1');
  const soaks = run.steps.filter((step) => step.kind === 'soak');
  const soakReads = totalOf(soaks, (p) => p.table.readUnits) / totalOf(soaks, (p) => p.runs);
  const steadyReads = result.steady.table.readUnits / result.steady.runs;
  const memberMonth = (soakReads - steadyReads) * runsPerMonth(5) * PRICES.dynamoRead.usd;
  const rolloutCost = totalOf(v1, phaseCost);
  const waveCost = phaseCost(result.wave);
  return [
    '## A rollout over the fleet',
    '',
    ...(run.members < FULL_FLEET
      ? [
          `**This run's rollout is of ${n} members, not ${FULL_FLEET.toLocaleString('en')}**, for the time this run had. The ${FULL_FLEET.toLocaleString('en')}-member runs before it stopped in v1's wave 2 after its first 50 members, and so did a ${n}-member one: the components' own API server (one of the ${result.clusters} clusters) had a Service IP range of 256 addresses, which its share of the ${result.options.deliveries.toLocaleString('en')} deliveries above nearly filled, so a member's Service could not be created (\`failed to allocate a serviceIP: range is full\`), its run failed and the rollout halted in wave 2, as a failing member should halt it. Its range is 4,096 addresses now, as the other clusters'; a ${FULL_FLEET.toLocaleString('en')}-member rollout on it is still to be run.`,
          '',
        ]
      : []),
    `A fleet of its own, ${n} deliveries of one artifact (\`scale/fleet\`, the same 4 objects, each delivery into its own namespace with \`targetNamespace\`, round-robin over the ${result.clusters} API servers), all members of one rollout: wave 1 \`canary-*\` (${run.waveSizes[0]}), wave 2 \`eu-*\` (${run.waveSizes[1]}), wave 3 \`'*'\` (${run.waveSizes[2]}), a ${run.soakMinutes}-minute soak after waves 1 and 2, \`maxParallel: ${run.maxParallel}\`, \`supersede: wait\`. A fleet of its own, not the ${result.options.deliveries.toLocaleString('en')} deliveries above: a rollout's members pull its one repository, and those each have their own artifact. ` +
      "Everything goes through the reconcile handler and the stand-in for Lambda as above: a push is the ECR push event (the handler looks the repository's deliveries up and invokes itself once per member); a wave's members that may take the revision are reconciled by the runs before them (`followRollout`); a soak's end is the one-time schedules of the next wave's first `maxParallel` members, arranged once by the first run that finds the wave soaking (`wakeAtSoakEnd`; their own held runs name the same schedules). " +
      `The soaks pass on the simulation's clock (real time plus a jump: the clock moves ${run.soakMinutes} minutes forward in a moment, and the schedules that came due fire), and once a soak is under way every member runs once, as its 5-minute interval schedule would run it. ` +
      `v1 is the members' first revision; then one member of wave 2, \`${run.faulty}\` (past wave 2's first ${run.maxParallel}), gets an admission policy on its cluster (a ValidatingAdmissionPolicy that admits only v1's image in its namespace), v2 is pushed, and every member runs once more after the halt.`,
    '',
    table(
      [
        'step',
        'runs',
        'wall time',
        'outcomes',
        'DynamoDB requests / run',
        'read units / run',
        'write units / run',
        'API requests / run',
        'peak reconciles per cluster',
        'members at the revision after it',
        'cost in AWS',
      ],
      run.steps.map((step) => stepRow(step, run)),
    ),
    '',
    `- **The halt.** \`sluice rollout status fleet\`: ${run.haltSummary.replace(/\|/g, '\\|')}. Read from their API servers after the halt (and after every member's interval run that followed it): ${run.keptV1.wave3.toLocaleString('en')} of ${run.waveSizes[2]} members of wave 3 and ${run.keptV1.wave2} of wave 2's ${run.waveSizes[1]} (the refused member among them) still run v1.`,
    `- **Checked, or the run fails.** ${run.checks.join('; ')}. Each is read from the API servers (the Deployment's version label) and from the runs themselves (when each member's first run at the revision started, against when the wave before it was Ready and soaked).`,
    `- **Wall time.** v1's three waves took ${v1.map((step) => formatMs(step.phase.ms)).join(', ')} (${formatMs(totalOf(v1, (p) => p.ms))} in all, the soaks aside), against ${formatMs(result.wave.ms)} for the ${result.options.deliveries.toLocaleString('en')} deliveries of the plain wave above: a wave of ${run.maxParallel} at a time follows from run to run, each run reading the whole rollout's state. Each admitted member is woken once: the run that admits it claims its wake-up in the table (a conditional put), and the runs after it do not ask for it again while it runs or waits in Lambda's queue. v1's waves took ${totalOf(v1, (p) => p.runs).toLocaleString('en')} runs for ${run.members.toLocaleString('en')} members (${skipped(v1)} \`Skipped\`, \`LeaseHeld\`): the push event runs every member once; besides each member's run that took the revision, a soak's end wakes the next wave's first ${run.maxParallel} (Scheduler) and the first run after it wakes them once more, should those schedules be lost; a woken member that already took it finds nothing to change.`,
    `- **Cost.** Taking ${n} deliveries through v1's three waves cost ${usd(rolloutCost)} in AWS (the steps above, Lambda time estimated as in the cost model below from the runs' CPU time and round trips), against ${usd(waveCost)} for the plain wave; the interval runs during the soaks are the members' steady state. A member's run reads every member's status (BatchGetItem, strongly consistent: a read unit each) to compute the rollout's state: ${soakReads.toFixed(0)} read units a run against ${steadyReads.toFixed(0)} for a delivery outside a rollout, ${usd(memberMonth)} more a delivery-month at a 5-minute interval in a rollout of ${n}, while a generation is under way (it grows with the rollout's size); once one is recorded as completed, members' runs read the generation alone.`,
    '',
  ];
}
