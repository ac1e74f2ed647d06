// The stand-in's InputTransformer against EventBridge's documented examples:
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-transform-target-input.html (the EC2
// event and its table of templates and outputs; "Common issues": quotes, no escaping, a missing
// path), the SNS tutorial (eb-input-transformer-tutorial.html: the message arrives as
// `"This event was of customerCreated type."`, quotes included) and the API reference's
// InputTransformer / PutTargets ("InputTemplate for target … contains invalid placeholder …").
import { describe, expect, it } from 'vitest';
import { checkInputTransformer, renderInputTransformer } from '../../dev/input-transformer.ts';

const EC2 = {
  version: '0',
  id: '7bf73129-1428-4cd3-a780-95db273d1602',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '123456789012',
  time: '2015-11-11T21:29:54Z',
  region: 'us-east-1',
  resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-abcd1111'],
  detail: { 'instance-id': 'i-0123456789', state: 'RUNNING' },
};
const PATHS = {
  timestamp: '$.time',
  instance: '$.detail.instance-id',
  state: '$.detail.state',
  resource: '$.resources[0]',
};
const CONTEXT = {
  ruleArn: 'arn:aws:events:us-east-2:123456789012:rule/example',
  ruleName: 'example',
  ingestionTime: '2015-11-11T21:29:55Z',
};
const render = (template: string, paths: Record<string, string> = PATHS, event: object = EC2) =>
  renderInputTransformer(
    { InputPathsMap: paths, InputTemplate: template },
    event as Record<string, unknown>,
    CONTEXT,
    'target T',
  );

describe('input transformers (EventBridge documentation examples)', () => {
  it('a simple string keeps its quotes: "instance <instance> is in <state>"', () => {
    expect(render('"instance <instance> is in <state>"')).toBe('"instance i-0123456789 is in RUNNING"');
    expect(render('"<resource>"')).toBe('"arn:aws:ec2:us-east-1:123456789012:instance/i-abcd1111"');
  });

  it('the SNS tutorial: "This event was of <detail-type> type." arrives quoted', () => {
    const event = { ...EC2, 'detail-type': 'customerCreated', detail: {} };
    expect(render('"This event was of <detail-type> type."', { 'detail-type': '$.detail-type' }, event)).toBe(
      '"This event was of customerCreated type."',
    );
  });

  it('a string with escaped quotes keeps the escapes', () => {
    expect(render('"instance \\"<instance>\\" is in <state>"')).toBe(
      '"instance \\"i-0123456789\\" is in RUNNING"',
    );
  });

  it('JSON: a string value outside quotes is quoted, inside quotes it goes in as it is; the output is minified', () => {
    expect(render('{\n  "instance" : <instance>,\n  "state": <state>\n}')).toBe(
      '{"instance":"i-0123456789","state":"RUNNING"}',
    );
    expect(
      JSON.parse(
        render(
          '{"instance" : <instance>, "state": "<state>", "instanceStatus": "instance \\"<instance>\\" is in <state>"}',
        ),
      ),
    ).toEqual({
      instance: 'i-0123456789',
      state: 'RUNNING',
      instanceStatus: 'instance "i-0123456789" is in RUNNING',
    });
    expect(
      JSON.parse(render('{"instance" : <instance>, "state": [ 9, <state>, true ], "Transformed" : "Yes"}')),
    ).toEqual({
      instance: 'i-0123456789',
      state: [9, 'RUNNING', true],
      Transformed: 'Yes',
    });
  });

  it('predefined variables: the rule ARN and name in JSON and in a string; the event itself as a JSON value', () => {
    expect(
      JSON.parse(
        render(
          '{"instance" : <instance>, "ruleArn" : <aws.events.rule-arn>, "ruleName" : <aws.events.rule-name>, "originalEvent" : <aws.events.event.json>}',
        ),
      ),
    ).toEqual({
      instance: 'i-0123456789',
      ruleArn: CONTEXT.ruleArn,
      ruleName: 'example',
      originalEvent: EC2,
    });
    expect(render('"<aws.events.rule-name> triggered"')).toBe('"example triggered"');
    expect(JSON.parse(render('{"e": <aws.events.event>}')).e).not.toHaveProperty('detail');
  });

  it('does not escape a value: a quote in it stays a bare quote inside the string', () => {
    const event = { ...EC2, detail: { ...EC2.detail, state: 'closed by freeze "year end"' } };
    expect(render('"instance <instance> is <state>"', PATHS, event)).toBe(
      '"instance i-0123456789 is closed by freeze "year end""',
    );
  });

  it('an object or array inside a string loses its quotes; a missing path gives an empty value', () => {
    const event = { ...EC2, detail: { gates: ['a', 'b'], nested: { key1: 'value1' } } };
    expect(render('"gates <g> detail <d>"', { g: '$.detail.gates', d: '$.detail.nested' }, event)).toBe(
      '"gates [a,b] detail {key1:value1}"',
    );
    expect(render('"info extracted from detail <command>"', { command: '$.detail.notinmessage' })).toBe(
      '"info extracted from detail "',
    );
  });

  it('refuses, as PutTargets does, a placeholder not in InputPathsMap (angle brackets cannot be escaped)', () => {
    expect(() =>
      checkInputTransformer(
        { InputPathsMap: PATHS, InputTemplate: '"--for <duration> --reason <why>"' },
        'target T',
      ),
    ).toThrow('target T: InputTemplate contains invalid placeholder duration');
  });

  it('refuses what it would have to guess: a plain unquoted template, a wildcard path, the event inside a string', () => {
    expect(() =>
      checkInputTransformer({ InputPathsMap: PATHS, InputTemplate: '<instance> is in <state>' }, 'target T'),
    ).toThrow('neither a quoted string nor JSON');
    expect(() =>
      checkInputTransformer({ InputPathsMap: { all: '$.detail.*' }, InputTemplate: '"<all>"' }, 'target T'),
    ).toThrow('does not implement wildcard paths');
    expect(() =>
      checkInputTransformer({ InputTemplate: '"event: <aws.events.event.json>"' }, 'target T'),
    ).toThrow('can only be the value of a JSON field');
  });
});
