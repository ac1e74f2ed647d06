// The `rollouts` of a config: waves settled against the deliveries, and every mistake reported at
// the field it is in.
import { describe, expect, it } from 'vitest';
import { issuesOf } from '../../support/config-issues.ts';
import { parseConfig, parseRollout } from '../../../functions/core/config/index.ts';

const REPO = 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/app';

const delivery = (name: string, url = REPO) => ({
  name,
  source: { url, tag: 'v1' },
  cluster: { eks: { name, region: 'eu-west-1' } },
});

const FLEET = ['canary-a', 'canary-b', 'eu-1', 'eu-2', 'us-1'].map((name) => delivery(name));

const rollout = (overrides: Record<string, unknown> = {}) => ({
  name: 'app',
  source: { url: REPO, semver: '^1' },
  waves: [
    { deliveries: ['canary-*'], soak: '30m' },
    { deliveries: ['eu-*'], soak: '1h', gate: 'eu-approval' },
    { deliveries: ['*'] },
  ],
  ...overrides,
});

const GATES = [{ name: 'eu-approval', default: 'closed', approval: 'revision' }];

describe('rollouts in the config', () => {
  it('settles each wave to the deliveries no earlier wave took, in config order', () => {
    const config = parseConfig({ gates: GATES, deliveries: FLEET, rollouts: [rollout({ maxParallel: 2 })] });
    expect(config.rollouts).toStrictEqual([
      {
        name: 'app',
        source: { url: REPO, semver: '^1', provider: 'aws', insecure: false },
        waves: [
          { patterns: ['canary-*'], deliveries: ['canary-a', 'canary-b'], soakMs: 1_800_000 },
          { patterns: ['eu-*'], deliveries: ['eu-1', 'eu-2'], soakMs: 3_600_000, gate: 'eu-approval' },
          { patterns: ['*'], deliveries: ['us-1'] },
        ],
        maxParallel: 2,
        supersede: 'wait',
      },
    ]);
  });

  it('has no rollouts when none are given', () => {
    expect(parseConfig({ deliveries: FLEET }).rollouts).toStrictEqual([]);
  });

  it('names the pattern that matches no delivery, and the nearest name', () => {
    const issues = issuesOf(() =>
      parseConfig({
        gates: GATES,
        deliveries: FLEET,
        rollouts: [
          rollout({ waves: [{ deliveries: ['canary-x'] }, { deliveries: ['ap-*'] }, { deliveries: ['*'] }] }),
        ],
      }),
    );
    expect(issues).toEqual([
      {
        path: 'rollouts[app].waves[0].deliveries[0]',
        message: '"canary-x" matches no delivery in deliveries (did you mean "canary-a"?)',
      },
      { path: 'rollouts[app].waves[1].deliveries[0]', message: '"ap-*" matches no delivery in deliveries' },
    ]);
  });

  it('refuses a wave whose deliveries all went to earlier waves', () => {
    const issues = issuesOf(() =>
      parseConfig({
        deliveries: FLEET,
        rollouts: [rollout({ waves: [{ deliveries: ['*'] }, { deliveries: ['eu-*'] }] })],
      }),
    );
    expect(issues).toEqual([
      {
        path: 'rollouts[app].waves[1].deliveries',
        message:
          'wave 2 of rollout "app" takes no delivery: every delivery its patterns match is in an earlier wave',
      },
    ]);
  });

  it('puts a delivery in one rollout at most', () => {
    const issues = issuesOf(() =>
      parseConfig({
        deliveries: FLEET,
        rollouts: [
          rollout({ waves: [{ deliveries: ['eu-*'] }] }),
          rollout({ name: 'other', waves: [{ deliveries: ['eu-1', 'us-1'] }] }),
        ],
      }),
    );
    expect(issues).toEqual([
      {
        path: 'rollouts[other].waves[0].deliveries[0]',
        message: 'delivery "eu-1" is already in rollout "app": a delivery takes part in one rollout at most',
      },
    ]);
  });

  it('names an undefined wave gate, a duplicate name, and a member pulling from another repository', () => {
    const other = 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/other';
    const issues = issuesOf(() =>
      parseConfig({
        gates: [{ name: 'eu-approvals', default: 'closed' }],
        deliveries: [...FLEET, delivery('stray', other)],
        rollouts: [
          rollout({ waves: [{ deliveries: ['eu-*'], gate: 'eu-approval' }, { deliveries: ['stray'] }] }),
          rollout({ waves: [{ deliveries: ['us-1'] }] }),
        ],
      }),
    );
    expect(issues).toEqual([
      {
        path: 'rollouts[0].waves[0].gate',
        message:
          'wave 1 of rollout "app" is held by gate "eu-approval", which is not defined in gates (did you mean "eu-approvals"?)',
      },
      {
        path: 'rollouts[0].waves[1].deliveries[0]',
        message:
          'delivery "stray" pulls from repository "other", not "app" as rollout "app" does: every member takes the rollout\'s digest, so it must pull from the same repository',
      },
      { path: 'rollouts[1].name', message: 'duplicate rollout name "app" (also rollouts[0])' },
    ]);
  });

  it('checks the fields of a rollout: soak, maxParallel, supersede, patterns, waves', () => {
    const issues = issuesOf(() =>
      parseConfig({
        deliveries: FLEET,
        rollouts: [
          rollout({
            waves: [
              { deliveries: ['Canary_*'], soak: '45d' },
              { deliveries: [] },
              { deliveries: ['*'], soak: 30 },
            ],
            maxParallel: 0,
            supersede: 'later',
          }),
          { name: 'none', source: { url: REPO }, waves: [] },
        ],
      }),
    );
    expect(issues).toEqual([
      {
        path: 'rollouts[app].waves[0].deliveries[0]',
        message:
          '"Canary_*" is not a delivery name or pattern: use lowercase letters, digits and "-", with "*" for any run of them and "?" for one',
      },
      { path: 'rollouts[app].waves[0].soak', message: 'must be at most 30d: a longer soak is a mistake' },
      {
        path: 'rollouts[app].waves[1].deliveries',
        message: 'name at least one delivery or pattern (e.g. "canary-*", "*")',
      },
      {
        path: 'rollouts[app].waves[2].soak',
        message: '30 is not a duration: the number needs a unit (ms, s, m, h or d), e.g. 30s',
      },
      { path: 'rollouts[app].maxParallel', message: 'must be at least 1' },
      { path: 'rollouts[app].supersede', message: 'must be one of wait, restart, not "later"' },
      { path: 'rollouts[none].waves', message: 'a rollout needs at least one wave' },
    ]);
  });

  it('parses one stored rollout whose waves name their deliveries', () => {
    expect(
      parseRollout({
        name: 'app',
        source: { url: REPO },
        waves: [{ deliveries: ['a', 'b'] }],
        supersede: 'restart',
      }),
    ).toStrictEqual({
      name: 'app',
      source: { url: REPO, tag: 'latest', provider: 'aws', insecure: false },
      waves: [{ patterns: ['a', 'b'], deliveries: ['a', 'b'] }],
      supersede: 'restart',
    });
  });
});
