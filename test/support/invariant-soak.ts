// The invariant soak's property (fast-check): for any two hostile revisions, every invariant of
// invariants.ts holds after every sluice call of invariant-scenario.ts. A failing seed is shrunk
// to a smallest artifact that still breaks an invariant; the failure names the seed, the shrunk
// artifact and the invariants violated, so `--seed <seed>` reruns it.
// No vitest imports: the soak runs it under plain tsx.
import fc from 'fast-check';
import {
  ALL_GENERATORS,
  revisionsSpec,
  type ArtifactSpec,
  type GeneratorOptions,
} from './invariant-artifacts.ts';
import { runInvariantScenario, type InvariantEnv, type InvariantReport } from './invariant-scenario.ts';
import { addExercise, noExercise, type Exercise } from './invariants.ts';

export class InvariantViolated extends Error {
  constructor(readonly report: InvariantReport) {
    super(
      report.violations.map((v) => `[${v.invariant}] ${v.detail}`).join('\n') +
        `\nsteps:\n  ${report.steps.join('\n  ')}`,
    );
  }
}

export interface SeedResult {
  readonly seed: number;
  readonly runs: number;
  readonly failed: boolean;
  /** The shrunk artifact (two revisions), when it failed. */
  readonly artifact?: readonly [ArtifactSpec, ArtifactSpec];
  /** How often each invariant was exercised, over every scenario run (shrinking's included). */
  readonly exercise: Exercise;
  /** Scenario runs, shrinking's included. */
  readonly scenarios: number;
  readonly shrinks: number;
  readonly invariants: readonly string[];
  /** The violations and steps of the shrunk artifact's run, or the error of a scenario that crashed. */
  readonly error?: string;
}

/**
 * `runs` scenarios from `seed` with the generators of `options`; on a failure, shrinks for at most
 * `shrinkMs` (0: reports the first failing artifact unshrunk).
 */
export async function checkSeed(
  env: InvariantEnv,
  seed: number,
  runs = 1,
  shrinkMs = 300_000,
  options: GeneratorOptions = ALL_GENERATORS,
): Promise<SeedResult> {
  const exercise = noExercise();
  let scenarios = 0;
  const details = await fc.check(
    fc.asyncProperty(revisionsSpec(options), async (revisions) => {
      const report = await runInvariantScenario({ ...env, seed }, revisions);
      addExercise(exercise, report.exercise);
      scenarios++;
      if (report.violations.length > 0) throw new InvariantViolated(report);
    }),
    {
      seed,
      numRuns: runs,
      endOnFailure: shrinkMs === 0,
      ...(shrinkMs > 0 && { interruptAfterTimeLimit: shrinkMs }),
    },
  );
  const error = details.errorInstance;
  return {
    seed,
    runs: details.numRuns,
    failed: details.failed,
    ...(details.counterexample && { artifact: details.counterexample[0] }),
    shrinks: details.numShrinks,
    exercise,
    scenarios,
    invariants:
      error instanceof InvariantViolated ? [...new Set(error.report.violations.map((v) => v.invariant))] : [],
    ...(details.failed && {
      error:
        error instanceof InvariantViolated
          ? error.message
          : error instanceof Error
            ? (error.stack ?? error.message)
            : String(error),
    }),
  };
}

/** A failure as the soak and the test print it: seed, invariants, shrunk artifact, violations. */
export function describeFailure(result: SeedResult): string {
  return [
    `seed ${result.seed}: invariants violated: ${result.invariants.join(', ') || 'none (the scenario crashed)'}`,
    `shrunk artifact (${result.shrinks} shrinks): ${JSON.stringify(result.artifact)}`,
    result.error ?? '',
  ].join('\n');
}
