// The invariant soak (issues 27 and 39) in `npm test`: a fixed seed (so the same artifacts every
// time) of test/support/invariant-soak.ts with every generator, about two minutes, asserting
// that every invariant was exercised (a decrypt seen, a prune, a removal, a diff, an outbound
// attempt, a call timed); and the breaches of issue 27 as fixed artifacts, each of which the
// invariants must see as kept. A failure prints the seed, the shrunk artifact and the invariant
// violated. `npm run soak -- --mix invariants` runs many seeds with every generator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { componentsEnv } from '../../dev/components.ts';
import type { ArtifactSpec, ObjectSpec } from '../support/invariant-artifacts.ts';
import { runInvariantScenario, type InvariantEnv } from '../support/invariant-scenario.ts';
import { checkSeed, describeFailure } from '../support/invariant-soak.ts';
import { startTrap, startWatchdog, type Trap, type Watchdog } from '../support/invariants.ts';
import { scenarioDeps } from '../support/kill-scenario.ts';
import { testbed } from '../support/testbed.ts';

const bed = testbed();
let trap: Trap;
let watchdog: Watchdog;
let env: InvariantEnv;
beforeAll(async () => {
  trap = await startTrap();
  watchdog = startWatchdog();
  env = {
    bed,
    kubeConfig: bed.kubeConfig(),
    deps: scenarioDeps(bed),
    trap,
    watchdog,
    cliEnv: { ...process.env, ...componentsEnv(bed) },
  };
});
afterAll(async () => {
  await trap.close();
  await watchdog.stop();
});

/**
 * The seed of the fixed run, and how many scenarios it takes (about two minutes). Seed 3022's pairs:
 * two plain revisions with encrypted Secrets, the second pruning the first's Secret and
 * ServiceAccount; then a remote reference and a catastrophic CRD `pattern`.
 */
const SEED = 3022;
const RUNS = 2;

const object = (spec: Partial<ObjectSpec> & Pick<ObjectSpec, 'kind' | 'ns' | 'name'>): ObjectSpec => ({
  takeover: false,
  pruneDisabled: false,
  force: false,
  ...spec,
});
const artifact = (spec: Partial<ArtifactSpec>): ArtifactSpec => ({
  objects: [object({ kind: 'ConfigMap', ns: 'mine', name: 'x' })],
  sops: [],
  component: false,
  generator: false,
  crdPattern: false,
  policy: false,
  trigger: false,
  hostile: { kind: 'none' },
  ...spec,
});
const plain = artifact({});

describe('the invariant soak (issues 27, 39)', () => {
  it(`seed ${SEED}, ${RUNS} artifact pairs (every generator): every invariant holds after every sluice call, and each was exercised`, async () => {
    // No shrinking here (0): a failure prints the artifact as generated; the soak shrinks.
    const result = await checkSeed(env, SEED, RUNS, 0);
    expect(result.failed, describeFailure(result)).toBe(false);
    expect(result.runs).toBe(RUNS);
    const e = result.exercise;
    expect(
      {
        decrypts: e.decrypts > 0,
        prunes: e.prunes > 0,
        removals: e.removals > 0,
        diffs: e.diffs > 0,
        statuses: e.statuses > 0,
        outbound: e.outbound > 0,
        timed: e.timed > 0,
        measured: e.measured > 0,
      },
      JSON.stringify(e),
    ).toEqual({
      decrypts: true,
      prunes: true,
      removals: true,
      diffs: true,
      statuses: true,
      outbound: true,
      timed: true,
      measured: true,
    });
  }, 600_000);

  // The breaches of issue 27, each as the artifact that made it, and the invariant it broke.
  const breaches: [string, string, readonly [ArtifactSpec, ArtifactSpec]][] = [
    [
      'an encrypted Secret patched into kind Leak, whose CRD schema quotes the value',
      'no-leak',
      [
        artifact({
          sops: [{ secret: 'a', field: 'data', dir: 'sub' }],
          hostile: { kind: 'sops-attack', attack: 'to-leak' },
        }),
        plain,
      ],
    ],
    [
      "declaring an existing Namespace to take another delivery's ConfigMap in it, then pruning it",
      'owns-deletes',
      [
        artifact({
          objects: [
            object({ kind: 'Namespace', ns: 'handmade', name: 'x' }),
            object({ kind: 'ConfigMap', ns: 'handmade', name: 'shared' }),
          ],
        }),
        plain,
      ],
    ],
    [
      'a remote resource with a `{`, which the pre-kustomize check skipped',
      'no-outbound',
      [artifact({ hostile: { kind: 'remote', remotes: ['resource-brace'] } }), plain],
    ],
    [
      'an inline generator reading a file from a URL',
      'no-outbound',
      [artifact({ hostile: { kind: 'remote', remotes: ['inline-generator'] } }), plain],
    ],
    [
      'a "billion laughs" file listed in resources',
      'bounded-memory',
      [artifact({ hostile: { kind: 'laughs', levels: 9, width: 9, leafBytes: 3 } }), plain],
    ],
    [
      'a three-level "billion laughs" file, wide, over a 2 KiB leaf',
      'bounded-memory',
      [artifact({ hostile: { kind: 'laughs', levels: 3, width: 90, leafBytes: 2048 } }), plain],
    ],
  ];
  it.each(breaches)(
    '%s: %s holds',
    async (_, invariant, revisions) => {
      const report = await runInvariantScenario(env, revisions);
      expect(report.violations, report.steps.join('\n')).toEqual([]);
      expect(invariant).toMatch(/^(no-leak|owns-deletes|no-outbound|bounded-memory)$/);
    },
    300_000,
  );

  it('a valid encrypted Secret is decrypted, applied, pruned and removed, and sluice diff and status run', async () => {
    const report = await runInvariantScenario(env, [
      artifact({
        sops: [
          { secret: 'a', field: 'stringData', dir: 'sub' },
          { secret: 'b', field: 'data', dir: 'root' },
        ],
      }),
      artifact({ sops: [{ secret: 'b', field: 'data', dir: 'root' }] }),
    ]);
    expect(report.violations, report.steps.join('\n')).toEqual([]);
    expect(report.exercise, report.steps.join('\n')).toMatchObject({ diffs: 1, statuses: 1 });
    // Both Secrets after the first revision, one after the second.
    expect(report.exercise.decrypts, report.steps.join('\n')).toBe(3);
    expect(report.exercise.prunes, report.steps.join('\n')).toBeGreaterThanOrEqual(1);
    expect(report.exercise.removals, report.steps.join('\n')).toBeGreaterThanOrEqual(2);
  }, 300_000);
});
