// `rollouts` in the construct props: Durations become the schema's strings, the stored spec names
// each wave's deliveries, and mistakes name the prop.
import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseRollout } from '../../functions/core/config/index.ts';
import { resolveSpecs } from '../../lib/config.ts';
import type { SluiceDelivery, SluiceProps } from '../../lib/index.ts';
import { ECR_URL } from './synth.ts';

const delivery = (name: string): SluiceDelivery => ({
  name,
  source: { url: ECR_URL },
  cluster: { eks: { name, region: 'ap-northeast-1' } },
});

const props = (rollout: Record<string, unknown> = {}): SluiceProps => ({
  gates: [{ name: 'eu-approval', default: 'closed', approval: 'revision' }],
  deliveries: ['canary-a', 'eu-1', 'eu-2', 'us-1'].map(delivery),
  rollouts: [
    {
      name: 'app',
      source: { url: ECR_URL, semver: '^1' },
      waves: [
        { deliveries: ['canary-*'], soak: Duration.minutes(30) },
        { deliveries: ['eu-*'], soak: Duration.hours(1), gate: 'eu-approval' },
        { deliveries: ['*'] },
      ],
      maxParallel: 5,
      ...rollout,
    },
  ],
});

describe('Sluice props: rollouts', () => {
  it('stores each rollout with its waves naming their deliveries, which parse back to the same rollout', () => {
    const specs = resolveSpecs(props());
    const input = specs.rolloutInputs.get('app');
    expect(input).toStrictEqual({
      name: 'app',
      source: { url: ECR_URL, semver: '^1' },
      waves: [
        { deliveries: ['canary-a'], soak: '1800s' },
        { deliveries: ['eu-1', 'eu-2'], soak: '3600s', gate: 'eu-approval' },
        { deliveries: ['us-1'] },
      ],
      maxParallel: 5,
    });
    const stored = parseRollout(input);
    expect(stored.waves.map((wave) => wave.deliveries)).toEqual(
      specs.config.rollouts[0]!.waves.map((wave) => wave.deliveries),
    );
    expect(stored).toMatchObject({ maxParallel: 5, supersede: 'wait' });
  });

  it('names the prop at fault', () => {
    const error = (() => {
      try {
        resolveSpecs(
          props({
            waves: [
              { deliveries: ['canary-*'], soak: 30 },
              { deliveries: ['ap-*'], gate: 'eu-aproval' },
            ],
            supersede: 'never',
          }),
        );
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error('expected the props to be refused');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message.split('\n')).toEqual([
      'Sluice props: rollouts[app].waves[0].soak: must be a Duration (e.g. Duration.minutes(5))',
      'Sluice props: rollouts[app].supersede: must be one of wait, restart, not "never"',
      'Sluice props: rollouts[app].waves[1].deliveries[0]: "ap-*" matches no delivery in deliveries',
      'Sluice props: rollouts[app].waves[1].gate: wave 2 of rollout "app" is held by gate "eu-aproval", which is not defined in gates (did you mean "eu-approval"?)',
    ]);
  });
});
