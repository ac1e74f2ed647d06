import { describe, expect, it } from 'vitest';
import { issuesOf } from '../../support/config-issues.ts';
import { checkHealthCheckExprs, healthCheckExprIssues } from '../../../functions/core/cel/check-config.ts';
import {
  parseConfig as parseSchema,
  parseDelivery,
  type SluiceConfig,
} from '../../../functions/core/config/index.ts';

const ECR = 'oci://123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/oddy-test';
const D = 'deliveries[oddy-test]';
const SYNCED = "status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'True')";

function delivery(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'oddy-test',
    source: { url: ECR, tag: 'v1' },
    cluster: { eks: { name: 'prod', region: 'ap-northeast-1' } },
    wait: true,
    ...overrides,
  };
}

/** As `sluice register` and `cdk synth` validate: the schema, then the CEL expressions. */
function parseConfig(input: unknown, origin = 'config'): SluiceConfig {
  const config = parseSchema(input, origin);
  checkHealthCheckExprs(config, origin);
  return config;
}

const check = (fields: Record<string, unknown>) => ({
  apiVersion: 'bitnami.com/v1alpha1',
  kind: 'SealedSecret',
  current: SYNCED,
  ...fields,
});

describe('healthCheckExprs', () => {
  it("keeps Flux's examples as written, and leaves the field out when not given", () => {
    const entries = [
      {
        apiVersion: 'bitnami.com/v1alpha1',
        kind: 'SealedSecret',
        failed: "status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'False')",
        current: SYNCED,
      },
      {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'Cluster',
        inProgress: 'has(status.observedGeneration) && metadata.generation != status.observedGeneration',
        current: "status.conditions.exists(e, e.type == 'Ready' && e.status == 'True')",
      },
      { apiVersion: 'v1', kind: 'Pod', current: "has(status.phase) && status.phase in ['Running']" },
    ];
    expect(parseDelivery(delivery({ healthCheckExprs: entries })).healthCheckExprs).toStrictEqual(entries);
    expect(parseDelivery(delivery())).not.toHaveProperty('healthCheckExprs');
  });

  it('accepts what CEL has: macros, operators, conversions, timestamps and the strings extension', () => {
    const expressions = [
      "status.conditions.exists_one(c, c.type == 'Ready') && size(status.conditions) > 0",
      "status.conditions.map(c, c.type).exists(t, t == 'Ready')",
      'has(status.readyReplicas) ? status.readyReplicas >= spec.replicas : false',
      "int(status.replicas) + 1 == 4 && dyn(status.phase) in ['Running', 'Succeeded']",
      "timestamp(status.lastUpdated) > timestamp('2026-01-01T00:00:00Z') - duration('1h')",
      "status.phase.lowerAscii().startsWith('run') || status.message.matches('^ok')",
      "strings.quote(status.phase) != '' && !(status.phase == 'Failed')",
      "status.conditions[0].status == 'True' && {'a': true}['a']",
    ];
    const healthCheckExprs = expressions.map((current, index) => check({ kind: `Kind${index}`, current }));
    const parsed = parseDelivery(delivery({ healthCheckExprs }));
    expect(parsed.healthCheckExprs).toHaveLength(expressions.length);
    expect(healthCheckExprIssues([parsed])).toEqual([]);
  });

  const cases: [string, unknown, string, string][] = [
    ['current missing', [check({ current: undefined })], `${D}.healthCheckExprs[0].current`, 'is required'],
    ['kind missing', [check({ kind: undefined })], `${D}.healthCheckExprs[0].kind`, 'is required'],
    [
      'apiVersion missing',
      [check({ apiVersion: undefined })],
      `${D}.healthCheckExprs[0].apiVersion`,
      'is required',
    ],
    ['empty current', [check({ current: '' })], `${D}.healthCheckExprs[0].current`, 'must not be empty'],
    [
      'not CEL',
      [check({ current: "status.conditions.filter(e, e.type == 'Ready'" })],
      `${D}.healthCheckExprs[0].current`,
      `"status.conditions.filter(e, e.type == 'Ready'" is not valid CEL (line 1, column `,
    ],
    [
      "optional syntax, which sluice's CEL lacks",
      [check({ current: "status.?conditions.orValue([]).exists(e, e.type == 'Ready')" })],
      `${D}.healthCheckExprs[0].current`,
      'optional syntax (a.?b, a[?b]) is not supported: guard the field with has(a.b) instead',
    ],
    [
      'an unknown function',
      [check({ failed: "status.conditions.exist(e, e.type == 'Failed')" })],
      `${D}.healthCheckExprs[0].failed`,
      `"status.conditions.exist(e, e.type == 'Failed')" calls exist(), which is not a CEL function`,
    ],
    [
      'a function with the wrong arguments',
      [check({ inProgress: 'size(status.conditions, 1) > 0' })],
      `${D}.healthCheckExprs[0].inProgress`,
      'calls size() with 2 arguments, which it does not take',
    ],
    [
      'a macro used wrongly',
      [check({ current: 'has(status)' })],
      `${D}.healthCheckExprs[0].current`,
      'calls the macro has() wrongly: it takes a field selection, as in has(status.phase)',
    ],
    [
      'a list where a bool is needed',
      [check({ current: "status.conditions.filter(e, e.type == 'Ready')" })],
      `${D}.healthCheckExprs[0].current`,
      'never evaluates to a bool (true or false): it gives a list',
    ],
    [
      'a number where a bool is needed',
      [check({ failed: 'size(status.conditions)' })],
      `${D}.healthCheckExprs[0].failed`,
      'never evaluates to a bool (true or false): it gives an int',
    ],
    [
      'bad apiVersion',
      [check({ apiVersion: 'bitnami.com/v1/x' })],
      `${D}.healthCheckExprs[0].apiVersion`,
      '"bitnami.com/v1/x" is not an apiVersion (group/version, e.g. example.com/v1, or v1 for the core group)',
    ],
    [
      'bad kind',
      [check({ kind: 'sealed secret' })],
      `${D}.healthCheckExprs[0].kind`,
      '"sealed secret" is not a kind',
    ],
    [
      'unknown field',
      [check({ currrent: 'true' })],
      `${D}.healthCheckExprs[0]`,
      'unknown field "currrent" (did you mean "current"?)',
    ],
    [
      'the same group and kind twice, at another version',
      [check({}), check({ apiVersion: 'bitnami.com/v1' })],
      `${D}.healthCheckExprs[1]`,
      'bitnami.com/SealedSecret is listed more than once (also healthCheckExprs[0]); an entry covers every version of its group and kind',
    ],
    ['not a list', check({}), `${D}.healthCheckExprs`, 'must be a list, not an object'],
  ];

  it.each(cases)('%s', (_, healthCheckExprs, path, message) => {
    const issues = issuesOf(() =>
      parseConfig({ deliveries: [delivery({ healthCheckExprs })] }, 'sluice.yaml'),
    );
    expect(issues).toContainEqual({ path, message: expect.stringContaining(message) });
  });

  it('names the field in the message, as sluice register prints it', () => {
    expect(() =>
      parseConfig(
        { deliveries: [delivery({ healthCheckExprs: [check({ current: 'status.' })] })] },
        'sluice.yaml',
      ),
    ).toThrow(
      'sluice.yaml: deliveries[oddy-test].healthCheckExprs[0].current: "status." is not valid CEL (line 1, column 7: found . but expecting end of input)',
    );
  });

  it('reports every broken expression at once', () => {
    const issues = issuesOf(() =>
      parseConfig({
        deliveries: [
          delivery({
            healthCheckExprs: [
              check({ current: 'x(', failed: "'a'" }),
              check({ kind: 'Other', inProgress: '1' }),
            ],
          }),
        ],
      }),
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      `${D}.healthCheckExprs[0].current`,
      `${D}.healthCheckExprs[0].failed`,
      `${D}.healthCheckExprs[1].inProgress`,
    ]);
  });
});
