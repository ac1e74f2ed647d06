// The "A rollout over the fleet" section of docs/scale.md, from the rollout phase of `npm run scale`.
import { table } from '../report.ts';
import { formatMs } from '../stats.ts';
import { PRICES, runsPerMonth } from './cost.ts';
import { peaks, phaseCost, sum, usd } from './docs.ts';
import type { RolloutRun, RolloutStep } from './rollout.ts';
import type { Phase, ScaleResult } from './simulate.ts';

const WAVE_NAMES = ['canary-*', 'eu-*', "'*'"];

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

/** Every rollout the run has, in the order run. */
const rolloutsOf = (result: ScaleResult): RolloutRun[] =>
  [result.rollout, ...(result.moreRollouts ?? [])].filter((run): run is RolloutRun => run !== undefined);

/** What one rollout cost, over all its steps (v1 and v2) and over v1's three waves. */
export function rolloutFigures(run: RolloutRun) {
  const all = run.steps;
  const v1 = wavesOf(run, 'v1');
  const runs = totalOf(all, (p) => p.runs);
  const readsPerRun = totalOf(all, (p) => p.table.readUnits) / runs;
  const writesPerRun = totalOf(all, (p) => p.table.writeUnits) / runs;
  const rolloutCost = totalOf(v1, phaseCost);
  // The push to every member (v1's wave 1): the one step every size runs, a partial run too.
  const push = v1[0]?.phase;
  return {
    pushReadsPerRun: push ? push.table.readUnits / push.runs : NaN,
    pushPerMember: push ? phaseCost(push) / run.members : NaN,
    runs,
    readsPerRun,
    writesPerRun,
    rolloutCost,
    perMember: rolloutCost / run.members,
    v1Ms: totalOf(v1, (p) => p.ms),
    allMs: totalOf(all, (p) => p.ms),
  };
}

/** The sizes side by side: per run and per member, what grows with the fleet and what does not. */
function sizesTable(runs: readonly RolloutRun[]): string[] {
  const rows = runs.map((run) => {
    const f = rolloutFigures(run);
    const whole = !run.partial;
    return [
      `${run.members.toLocaleString('en')}${run.partial ? ` (its first ${run.steps.length} step${run.steps.length > 1 ? 's' : ''} only)` : ''}`,
      run.waveSizes.map((n) => n.toLocaleString('en')).join(' / '),
      f.pushReadsPerRun.toFixed(1),
      `$${f.pushPerMember.toFixed(6)}`,
      f.runs.toLocaleString('en'),
      f.readsPerRun.toFixed(1),
      f.writesPerRun.toFixed(1),
      whole ? usd(f.rolloutCost) : '—',
      whole ? `$${f.perMember.toFixed(6)}` : '—',
      whole ? formatMs(f.v1Ms) : '—',
      formatMs(f.allMs),
      run.wallMs !== undefined ? formatMs(run.wallMs) : '—',
    ];
  });
  return [
    table(
      [
        'members',
        'waves',
        'the push to every member: read units / run',
        'the push: cost per member',
        'runs (v1 and v2)',
        'read units / run',
        'write units / run',
        "cost of v1's three waves",
        'per member',
        "wall time of v1's waves",
        'wall time of every step',
        'wall time with registering the fleet',
      ],
      rows,
    ),
    '',
  ];
}

export function rolloutSection(result: ScaleResult): string[] {
  const runs = rolloutsOf(result);
  if (runs.length === 0) return [];
  const figures = runs.map(rolloutFigures);
  const steadyReads = result.steady.table.readUnits / result.steady.runs;
  const whole = runs.filter((run) => !run.partial);
  const linear =
    whole.length > 1
      ? (() => {
          const [a, b] = [figures[runs.indexOf(whole[0]!)]!, figures[runs.indexOf(whole.at(-1)!)]!];
          const reads = Math.abs(b.readsPerRun - a.readsPerRun);
          const member = Math.abs(b.perMember - a.perMember) / a.perMember;
          return `From ${whole[0]!.members.toLocaleString('en')} to ${whole.at(-1)!.members.toLocaleString('en')} members the read units of a run changed by ${reads.toFixed(1)} (${a.readsPerRun.toFixed(1)} and ${b.readsPerRun.toFixed(1)}), and the cost per member by ${(member * 100).toFixed(1)} % (${`$${a.perMember.toFixed(6)}`} and ${`$${b.perMember.toFixed(6)}`}): the rollout's cost grows with the fleet, not with its square.`;
        })()
      : runs.length > 1
        ? (() => {
            const [a, b] = [runs[0]!, runs.at(-1)!];
            const shared = b.steps.filter((_, i) => a.steps[i] !== undefined);
            const per = (run: RolloutRun, i: number, of: (p: Phase) => number) =>
              of(run.steps[i]!.phase) / run.steps[i]!.phase.runs;
            const pairs = shared.map((step, i) => {
              const cost = [phaseCost(a.steps[i]!.phase) / a.members, phaseCost(step.phase) / b.members];
              return `${stepLabel(step, b).replace(/ \(.*?\)/, '')}: ${per(a, i, (p) => p.table.readUnits).toFixed(1)} and ${per(b, i, (p) => p.table.readUnits).toFixed(1)} read units a run, ${per(a, i, (p) => p.table.writeUnits).toFixed(1)} and ${per(b, i, (p) => p.table.writeUnits).toFixed(1)} write units, $${cost[0]!.toFixed(6)} and $${cost[1]!.toFixed(6)} a member (${((Math.abs(cost[1]! - cost[0]!) / cost[0]!) * 100).toFixed(1)} % apart)`;
            });
            return `Only the ${whole.map((run) => run.members.toLocaleString('en')).join(' and ')}-member rollout went through every step this time; the ${b.members.toLocaleString('en')}-member one ran its first ${shared.length === 1 ? 'step' : `${shared.length} steps`} only (\`SLUICE_SCALE_ROLLOUT_MORE_STOP_AFTER\`), as the time at hand on this machine allowed. Step by step, ${a.members.toLocaleString('en')} against ${b.members.toLocaleString('en')} members: ${pairs.join('; ')}.`;
          })()
        : `Only the ${runs[0]!.members.toLocaleString('en')}-member rollout was run this time (\`SLUICE_SCALE_ROLLOUT_MORE\` sets the further sizes, 10,000 by default).`;
  const alone =
    result.options.plain === false
      ? [
          `The rollouts below were run alone (\`SLUICE_SCALE_PLAIN=false\`), on ${result.machine.date.slice(0, 16).replace('T', ' ')} UTC (${result.machine.cores} cores, load average ${result.machine.load[0].toFixed(1)} at the start and ${result.machine.load[1].toFixed(1)} at the end, other work on the machine included); the phases above are the figures of the run recorded before them.`,
          '',
        ]
      : [];
  return [
    '## A rollout over the fleet',
    '',
    ...alone,
    `Fleets of their own, of ${runs.map((run) => run.members.toLocaleString('en')).join(' and ')} deliveries of one artifact each (\`scale/fleet\`${runs.length > 1 ? ', `scale/fleet-<n>`' : ''}, the same 4 objects, each delivery into its own namespace with \`targetNamespace\`, round-robin over the ${result.clusters} API servers), all members of one rollout each: wave 1 \`canary-*\` (1 %), wave 2 \`eu-*\` (9 %), wave 3 \`'*'\` (90 %), a ${runs[0]!.soakMinutes}-minute soak after waves 1 and 2, \`maxParallel: ${runs[0]!.maxParallel}\`, \`supersede: wait\`. Fleets of their own, not the ${result.options.deliveries.toLocaleString('en')} deliveries above: a rollout's members pull its one repository, and those each have their own artifact. ` +
      "Everything goes through the reconcile handler and the stand-in for Lambda as above: a push is the ECR push event (the handler looks the repository's deliveries up and invokes itself once per member); a wave's members that may take the revision are reconciled by the runs before them (`followRollout`, which moves the wave's wake-up cursor: each member is woken once); a soak's end is the one-time schedules of the next wave's first `maxParallel` members, arranged once by the first run that finds the wave soaking (`wakeAtSoakEnd`; their own held runs name the same schedules). " +
      `The soaks pass on the simulation's clock (real time plus a jump: the clock moves ${runs[0]!.soakMinutes} minutes forward in a moment, and the schedules that came due fire), and once a soak is under way every member runs once, as its 5-minute interval schedule would run it. ` +
      "v1 is the members' first revision; then one member half-way through wave 2 gets an admission policy on its cluster (a ValidatingAdmissionPolicy that admits only v1's image in its namespace), v2 is pushed, and every member runs once more after the halt.",
    '',
    "**How a run knows the rollout's state.** A member's run reads the rollout's spec, which holds a member count per wave and no member list (a few hundred bytes at 10 or 10,000 members), its own place (its wave and position, an item of the lookup partition it reads anyway to find its rollout), the rollout's generation, its halts and resumes, its wave gates and one tally per wave (one Query): how many members are Ready at the digest and since when, which failed, how many hold one of the wave's `maxParallel` places. Each member's run end changes its wave's tally by what its own status changed, in the same DynamoDB transaction as the status, computed from the status as the lease read it and the generation the status is marked for: a run end written twice changes it once, a run lost before its end changes neither. A member takes a `maxParallel` place with a conditional write on the tally before it takes the digest, and gives it back once Ready at it. The tallies are derived again from the members' statuses when one cannot be right (a count out of range) and once an hour of a generation (the first run that claims it): that repair is the only read of a whole wave, once per wave and hour, not once per run. The members to wake next (a member became Ready, a soak ended) are paged from the rollout's members in order, `maxParallel` at a time: one Query of as many small items. `sluice rollout status` still reads every member, for its table of members. The property test (test/core/rollout/tally.test.ts) checks the decisions taken from the tallies against the full statuses over 300 random histories with repeated and lost runs, lost and corrupted tallies and their repair; a tally that counts a repeated run twice, planted, is caught in 268 of them, and a member's place read in the wrong wave in 298.",
    '',
    ...sizesTable(runs),
    linear,
    '',
    ...runs.flatMap((run, i) => runSection(run, figures[i]!, result, steadyReads)),
  ];
}

function runSection(
  run: RolloutRun,
  f: ReturnType<typeof rolloutFigures>,
  result: ScaleResult,
  steadyReads: number,
): string[] {
  const n = run.members.toLocaleString('en');
  const v1 = wavesOf(run, 'v1');
  const soaks = run.steps.filter((step) => step.kind === 'soak');
  const stepsTable = table(
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
  );
  if (run.partial || soaks.length === 0)
    return [
      `### ${n} members (rollout \`${run.rollout ?? 'fleet'}\`), its first ${run.steps.length} step${run.steps.length > 1 ? 's' : ''}`,
      '',
      stepsTable,
      '',
      `- **Checked, or the run fails.** ${run.checks.join('; ')}.${run.wallMs !== undefined ? ` The rollout phase took ${formatMs(run.wallMs)}, registering the fleet (a namespace and a delivery per member) included.` : ''}`,
      '',
    ];
  const soakReads = totalOf(soaks, (p) => p.table.readUnits) / totalOf(soaks, (p) => p.runs);
  const memberMonth = (soakReads - steadyReads) * runsPerMonth(5) * PRICES.dynamoRead.usd;
  return [
    `### ${n} members (rollout \`${run.rollout ?? 'fleet'}\`)`,
    '',
    stepsTable,
    '',
    `- **The halt.** \`sluice rollout status ${run.rollout ?? 'fleet'}\`: ${run.haltSummary.replace(/\|/g, '\\|')}. Read from their API servers after the halt (and after every member's interval run that followed it): ${run.keptV1.wave3.toLocaleString('en')} of ${run.waveSizes[2]!.toLocaleString('en')} members of wave 3 and ${run.keptV1.wave2} of wave 2's ${run.waveSizes[1]} (the refused member \`${run.faulty}\` among them) still run v1.`,
    `- **Checked, or the run fails.** ${run.checks.join('; ')}. Each is read from the API servers (the Deployment's version label) and from the runs themselves (when each member's first run at the revision started, against when the wave before it was Ready and soaked).`,
    `- **Wall time.** v1's three waves took ${v1.map((step) => formatMs(step.phase.ms)).join(', ')} (${formatMs(f.v1Ms)} in all, the soaks aside)${run.wallMs !== undefined ? `; the whole rollout phase, registering the fleet and v2 included, ${formatMs(run.wallMs)}` : ''}. v1's waves took ${totalOf(v1, (p) => p.runs).toLocaleString('en')} runs for ${n} members (${skipped(v1)} \`Skipped\`, \`LeaseHeld\`).`,
    `- **Cost.** Taking ${n} deliveries through v1's three waves cost ${usd(f.rolloutCost)} in AWS ($${f.perMember.toFixed(6)} a member; Lambda time estimated as in the cost model below from the runs' CPU time and round trips). A member's run during a soak read ${soakReads.toFixed(1)} read units against ${steadyReads.toFixed(1)} for a delivery outside a rollout: ${usd(memberMonth)} more a delivery-month at a 5-minute interval while a generation is under way, whatever the rollout's size.`,
    '',
  ];
}
