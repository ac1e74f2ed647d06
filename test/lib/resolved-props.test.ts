// The construct's defaults are written once (lib/resolved-props.ts) and each is what the prop's
// `@default` in lib/props.ts says: the JSDoc is read here and every value default evaluated.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/bundle-options.ts';
import type { SluiceProps } from '../../lib/index.ts';
import { PROP_DEFAULTS, resolveProps, type ResolvedProps } from '../../lib/resolved-props.ts';

const propsSource = readFileSync(join(PROJECT_ROOT, 'lib', 'props.ts'), 'utf8');
const propsBody = /^export interface SluiceProps \{\n([\s\S]*?)^\}/m.exec(propsSource)?.[1];
if (propsBody === undefined) throw new Error('lib/props.ts: no `export interface SluiceProps { … }`');

/** Each member of `interface SluiceProps` with the text of its `@default` tag. */
function documentedDefaults(): Map<string, string> {
  const defaults = new Map<string, string>();
  for (const member of propsBody!.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*readonly (\w+)\?:/g)) {
    const tag = /@default\s+(.+?)\s*(?:\*\/)?$/m.exec(member[1]!);
    if (tag) defaults.set(member[2]!, tag[1]!);
  }
  return defaults;
}

/** A `@default` that names a value (not `- a description`), evaluated with the props' namespaces. */
function evaluate(prop: string, text: string): unknown {
  const scope = { Duration, RemovalPolicy, Runtime: lambda.Runtime, logs };
  try {
    return new Function(...Object.keys(scope), `return (${text});`)(...Object.values(scope));
  } catch (error) {
    throw new Error(`lib/props.ts: SluiceProps.${prop}'s @default ${text} is not a value: ${String(error)}`);
  }
}

const stack = () => new Stack(new App(), 'Named');
const documented = documentedDefaults();
const valueDefaults = [...documented].filter(([, text]) => !text.startsWith('-'));

describe('the defaults of the Sluice props', () => {
  it('are read from the JSDoc of every prop, each of which documents one (the reading is not vacuous)', () => {
    const members = [...propsBody!.matchAll(/^ {2}readonly (\w+)\??:/gm)].map((m) => m[1]);
    expect(members.length).toBeGreaterThanOrEqual(25);
    expect([...documented.keys()]).toEqual(members);
    expect(documented.get('reconcileTimeout')).toBe('Duration.minutes(15)');
    expect(valueDefaults.length).toBeGreaterThanOrEqual(10);
  });

  it('are written once, in PROP_DEFAULTS, for exactly the props whose @default is a value', () => {
    expect(Object.keys(PROP_DEFAULTS).sort()).toEqual(valueDefaults.map(([prop]) => prop).sort());
  });

  it.each(valueDefaults)('%s: resolved to its @default %s when not given', (prop, text) => {
    const resolved = resolveProps({}, stack()) as unknown as Record<string, unknown>;
    expect(resolved[prop], `SluiceProps.${prop}`).toEqual(evaluate(prop, text));
  });

  it('takes a given value over each default', () => {
    const given = {
      dashboard: false,
      consoleTestEvents: 'existing',
      monitoring: 'fleet',
      blockedAlarmThreshold: Duration.hours(2),
      removalPolicy: RemovalPolicy.DESTROY,
      tableDeletionProtection: false,
      runtime: lambda.Runtime.NODEJS_20_X,
      forwardedPushEvents: true,
      spreadIntervals: false,
      reconcileMemorySize: 2048,
      reconcileTimeout: Duration.minutes(10),
      logRetention: logs.RetentionDays.ONE_WEEK,
    } satisfies { [K in keyof typeof PROP_DEFAULTS]: SluiceProps[K] };
    const resolved = resolveProps(given, stack());
    for (const [prop, value] of Object.entries(given))
      expect(resolved[prop as keyof ResolvedProps], prop).toBe(value);
  });

  it('approvalTopic: the alarmTopic unless given; undefined with neither', () => {
    const s = stack();
    const alarmTopic = new sns.Topic(s, 'Alarms');
    const approvalTopic = new sns.Topic(s, 'Approvals');
    expect(documented.get('approvalTopic')).toMatch(/^- the alarmTopic/);
    expect(resolveProps({ alarmTopic }, s).approvalTopic).toBe(alarmTopic);
    expect(resolveProps({ alarmTopic, approvalTopic }, s).approvalTopic).toBe(approvalTopic);
    expect(resolveProps({}, s).approvalTopic).toBeUndefined();
  });

  it("exportPrefix: the stack's name; alarmNamePrefix: exportPrefix, else the stack's name", () => {
    expect(documented.get('exportPrefix')).toBe("- the stack's name");
    expect(documented.get('alarmNamePrefix')).toBe("- `exportPrefix`, else the stack's name");
    expect(resolveProps({}, stack())).toMatchObject({ exportPrefix: 'Named', alarmNamePrefix: 'Named' });
    expect(resolveProps({ exportPrefix: 'Pfx' }, stack())).toMatchObject({
      exportPrefix: 'Pfx',
      alarmNamePrefix: 'Pfx',
    });
    expect(resolveProps({ exportPrefix: 'Pfx', alarmNamePrefix: 'Alarms' }, stack())).toMatchObject({
      exportPrefix: 'Pfx',
      alarmNamePrefix: 'Alarms',
    });
  });

  it('refuses a runtime the functions are not built for, naming it', () => {
    expect(() => resolveProps({ runtime: lambda.Runtime.NODEJS_18_X }, stack())).toThrow(
      /runtime 'nodejs18\.x': sluice's functions run on nodejs20\.x or nodejs22\.x/,
    );
  });
});
