// The EventBridge stand-in over the wire, through @aws-sdk/client-eventbridge: PutEvents signed by
// a known identity, routed by the rules of a template CDK synthesized, delivered to SNS topic
// targets as their messages; unsigned or forged requests refused; unmatched events kept.
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as sns from 'aws-cdk-lib/aws-sns';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesOfTemplate, standInRef, writeEventRules } from '../../dev/event-rules.ts';
import { eventBridgeDeliveries, eventBridgeHandler } from '../../dev/eventbridge-endpoint.ts';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import { putSluiceEvent } from '../../functions/core/aws/eventbridge-events.ts';
import { largeVariant, synth } from '../lib/synth.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-eventbridge-'));
const place = { region: 'eu-west-1', account: '123456789012' };
const options = {
  rulesDir: join(dir, 'rules'),
  deliveriesDir: join(dir, 'deliveries'),
  identities: [TEST_IDENTITIES.carol],
  ...place,
};
const server = createServer(eventBridgeHandler(options));
let endpoint: string;

/** A stack with a bus, a topic and two rules: a text message by InputTransformer (of sluice's events), and the whole event. */
function template(): unknown {
  const stack = new Stack(new App(), 'Shop');
  const bus = new events.EventBus(stack, 'Bus', { eventBusName: 'shop-events' });
  const topic = new sns.Topic(stack, 'Orders');
  const placed = new events.Rule(stack, 'Placed', {
    eventBus: bus,
    eventPattern: {
      source: ['sluice'],
      detailType: ['Order Placed'],
      detail: { total: [{ numeric: ['>', 100] }] },
    },
  });
  placed.addTarget(
    new targets.SnsTopic(topic, {
      message: events.RuleTargetInput.fromText(
        `big order ${events.EventField.fromPath('$.detail.id')} of ${events.EventField.fromPath('$.detail.total')} by ${events.EventField.fromPath('$.detail.customer')}`,
      ),
    }),
  );
  const all = new events.Rule(stack, 'All', {
    eventBus: bus,
    eventPattern: { source: ['shop'], detailType: ['Order Cancelled'] },
  });
  all.addTarget(new targets.SnsTopic(topic));
  return Template.fromStack(stack).toJSON();
}

beforeAll(async () => {
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  writeEventRules(options.rulesDir, 'Shop', template());
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
  rmSync(dir, { recursive: true, force: true });
});

const client = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
  new EventBridgeClient({ endpoint, region: place.region, credentials, maxAttempts: 1 });
const carol = () => client(TEST_IDENTITIES.carol);
const records = eventBridgeDeliveries(options.deliveriesDir);

describe('the EventBridge stand-in', () => {
  it('routes a signed PutEvents by the template rules: the InputTransformer text reaches the topic, quoted as EventBridge does', async () => {
    const topicArn = standInRef(
      'Shop',
      template(),
      Object.keys((template() as { Resources: object }).Resources).find((id) => id.startsWith('Orders'))!,
      place,
    );
    expect(topicArn).toMatch(/^arn:aws:sns:eu-west-1:123456789012:Shop-Orders[0-9A-F]{8}$/);
    const time = new Date('2026-05-01T10:00:00.123Z');
    await putSluiceEvent(carol(), {
      busName: 'shop-events',
      detailType: 'Order Placed',
      detail: { id: 'o-1', total: 250, customer: 'Ann' },
      time,
    });
    await putSluiceEvent(carol(), {
      busName: 'shop-events',
      detailType: 'Order Placed',
      detail: { id: 'o-2', total: 5, customer: 'Bo' },
      time,
    });
    expect(records.messages(topicArn)).toEqual(['"big order o-1 of 250 by Ann"']);
    // A rule without input delivers the whole event, as EventBridge builds it.
    const { Entries } = await carol().send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: 'shop-events',
            Source: 'shop',
            DetailType: 'Order Cancelled',
            Detail: '{"id":"o-3"}',
            Resources: ['arn:x'],
            Time: time,
          },
        ],
      }),
    );
    const event = JSON.parse(records.messages(topicArn)[1]!) as Record<string, unknown>;
    expect(event).toEqual({
      version: '0',
      id: Entries![0]!.EventId,
      'detail-type': 'Order Cancelled',
      source: 'shop',
      account: '123456789012',
      time: '2026-05-01T10:00:00Z',
      region: 'eu-west-1',
      resources: ['arn:x'],
      detail: { id: 'o-3' },
    });
    // The small order matched no rule: kept for assertions.
    expect(records.unmatched().map(({ event: e }) => e.detail)).toEqual([
      { id: 'o-2', total: 5, customer: 'Bo' },
    ]);
  });

  it('fails an entry for a bus no template declares, and one whose detail is not a JSON object', async () => {
    const result = await carol().send(
      new PutEventsCommand({
        Entries: [
          { EventBusName: 'nope', Source: 'shop', DetailType: 'x', Detail: '{}' },
          { EventBusName: 'shop-events', Source: 'shop', DetailType: 'x', Detail: '[1]' },
        ],
      }),
    );
    expect(result.FailedEntryCount).toBe(2);
    expect(result.Entries).toEqual([
      { ErrorCode: 'NotFoundException', ErrorMessage: 'Event bus nope does not exist.' },
      { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' },
    ]);
    await expect(
      putSluiceEvent(carol(), { busName: 'nope', detailType: 'x', detail: {}, time: new Date() }),
    ).rejects.toThrow("EventBridge bus 'nope' refused the event: Event bus nope does not exist.");
  });

  it('refuses a forged signature, an unknown key and an unsigned request', async () => {
    const put = new PutEventsCommand({ Entries: [{ Source: 'shop', DetailType: 'x', Detail: '{}' }] });
    await expect(
      client({ accessKeyId: TEST_IDENTITIES.carol.accessKeyId, secretAccessKey: 'wrong' }).send(put),
    ).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
    });
    await expect(
      client({ accessKeyId: 'AKIASTRANGER0000000', secretAccessKey: 'x' }).send(put),
    ).rejects.toMatchObject({
      name: 'InvalidClientTokenId',
    });
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' },
      body: '{"Entries":[{"Source":"shop","DetailType":"x","Detail":"{}"}]}',
    });
    expect(response.status).toBe(403);
  });

  it('refuses to load a template whose rule it cannot route by, naming the rule and field', () => {
    const stack = new Stack(new App(), 'Bad');
    const rule = new events.Rule(stack, 'Odd', {
      eventPattern: { source: ['shop'], detail: { ip: [{ cidr: '10.0.0.0/8' }] as unknown as string[] } },
    });
    rule.addTarget(new targets.SnsTopic(new sns.Topic(stack, 'T')));
    expect(() => writeEventRules(options.rulesDir, 'Bad', Template.fromStack(stack).toJSON())).toThrow(
      /stack Bad, rule Odd[0-9A-F]{8}: EventPattern detail\.ip\[0\]\.cidr: the EventBridge stand-in does not implement the 'cidr' operator/,
    );
  });
});

describe('the rules sluice synthesizes', () => {
  it('loads every rule of the large variant (all features, an event bus and topics) without refusing any', () => {
    const { template: large } = synth(largeVariant, {
      then: (sluice, stack) =>
        void sluice.grantBreakGlass(
          new iam.Role(stack, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() }),
        ),
    });
    const rules = rulesOfTemplate('Large', large.toJSON(), place);
    expect(rules.length).toBe(
      Object.values(large.findResources('AWS::Events::Rule')).filter(
        (r) => (r as { Properties: { EventPattern?: unknown } }).Properties.EventPattern,
      ).length,
    );
    expect(
      rules.filter((rule) => rule.targets.some((target) => target.input.kind === 'transformer')).length,
    ).toBeGreaterThan(0);
  });
});
