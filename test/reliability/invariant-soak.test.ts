// The invariant soak of issue 27 in `npm test`: a fixed seed (so the same hostile artifacts every
// time) of test/support/invariant-soak.ts, about two minutes; and the four breaches of issue 27 as
// fixed artifacts, each of which the invariants must see as kept. A failure prints the seed, the
// shrunk artifact and the invariant violated. `npm run soak -- --mix invariants` runs many seeds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { componentsEnv } from '../../dev/components.ts';
import type { ArtifactSpec, ObjectSpec } from '../support/invariant-artifacts.ts';
import { runInvariantScenario, type InvariantEnv } from '../support/invariant-scenario.ts';
import { checkSeed, describeFailure } from '../support/invariant-soak.ts';
import { startTrap, type Trap } from '../support/invariants.ts';
import { scenarioDeps } from '../support/kill-scenario.ts';
import { testbed } from '../support/testbed.ts';

const bed = testbed();
let trap: Trap;
let env: InvariantEnv;
beforeAll(async () => {
  trap = await startTrap();
  env = {
    bed,
    kubeConfig: bed.kubeConfig(),
    deps: scenarioDeps(bed),
    trap,
    cliEnv: { ...process.env, ...componentsEnv(bed) },
  };
});
afterAll(async () => {
  await trap.close();
});

/** The seed of the fixed run, and how many scenarios it takes (about two minutes). */
const SEED = 2027;
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
  leakCrd: false,
  component: false,
  generator: false,
  remotes: [],
  laughs: 0,
  ...spec,
});
const plain = artifact({});

describe('the invariant soak (issue 27)', () => {
  it(`seed ${SEED}, ${RUNS} hostile artifact pairs: every invariant holds after every sluice call`, async () => {
    const result = await checkSeed(env, SEED, RUNS, 240_000);
    expect(result.failed, describeFailure(result)).toBe(false);
    expect(result.runs).toBe(RUNS);
  }, 600_000);

  // The breaches of issue 27, each as the artifact that made it, and the invariant it broke.
  const breaches: [string, string, readonly [ArtifactSpec, ArtifactSpec]][] = [
    [
      'a genuine SOPS Secret patched into kind Leak, whose CRD schema quotes the value',
      'no-leak',
      [
        artifact({ sops: [{ fixture: 'age-secret.yaml', ns: 'mine', patch: 'to-leak' }], leakCrd: true }),
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
      [artifact({ remotes: ['resource-brace'] }), plain],
    ],
    [
      'an inline generator reading a file from a URL',
      'no-outbound',
      [artifact({ remotes: ['inline-generator'] }), plain],
    ],
    ['a "billion laughs" file listed in resources', 'bounded-memory', [artifact({ laughs: 9 }), plain]],
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
});
