// Red team, round 3: guards that read their input differently from the program they guard.
// Found: sluice's YAML parser (eemeli/yaml) applies a merge key (`<<`) only where no explicit key
// is set, and only under `%YAML 1.1` or with an explicit `!!merge` tag; kustomize's (go-yaml v2)
// applies every merge key, and one written after an explicit key overrides it. The check read
// `resources: [cm.yaml]`; kustomize read the merged URL and fetched it (Go never proxies loopback).
import { CoreV1Api } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calendarProblem } from '../../functions/core/config/icalendar.ts';
import { sopsDecryption, sopsFixture } from '../support/sops.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, kubeconfigCopy, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const deps = engineDeps();

let trap: Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  trap = createServer((socket) => {
    connections++;
    socket.once('data', () => {
      const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\ndata:\n  k: STOLEN\n';
      socket.end(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
  });
  await new Promise<void>((done) => trap.listen(0, '127.0.0.1', done));
  port = (trap.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((done) => trap.close(() => done())));

const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n';

const mergeCases: [string, (url: string) => Record<string, string>][] = [
  [
    '`%YAML 1.1` and a merge key after `resources:` (go-yaml lets it override)',
    (url) => ({
      'deploy/kustomization.yaml': `%YAML 1.1\n---\nresources: [cm.yaml]\n<<: {resources: ["${url}.yaml"]}\n`,
      'deploy/cm.yaml': CM,
    }),
  ],
  [
    'an explicit `!!merge <<` key after `resources:` (YAML 1.2)',
    (url) => ({
      'deploy/kustomization.yaml': `resources: [cm.yaml]\n!!merge <<: {resources: ["${url}.yaml"]}\n`,
      'deploy/cm.yaml': CM,
    }),
  ],
  [
    'a merge key in an inline transformer config',
    (url) => ({
      'deploy/kustomization.yaml':
        'resources: [cm.yaml]\ntransformers:\n- |-\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata:\n    name: p\n  path: p.yaml\n' +
        `  !!merge <<: {path: "${url}.yaml"}\n`,
      'deploy/cm.yaml': CM,
      'deploy/p.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n',
    }),
  ],
  [
    // go-yaml (YAML 1.1) breaks lines at U+2028; sluice's parser (YAML 1.2) does not: the URL was
    // part of one odd local path to the check, a second resource to kustomize.
    'a second resource after U+2028 (LINE SEPARATOR) on the line of the first',
    (url) => ({
      'deploy/kustomization.yaml': `resources:\n- cm.yaml\u2028- ${url}.yaml\n`,
      'deploy/cm.yaml': CM,
    }),
  ],
];

describe('kustomizations sluice and kustomize read differently (merge keys, line breaks)', () => {
  for (const [title, files] of mergeCases) {
    it(`${title}: refused, no connection is made`, async () => {
      const ns = uniqueName('rt-merge');
      await createNamespace(kc, ns);
      const name = uniqueName('rt-merge');
      const repository = uniqueName('redteam/merge');
      await registerDelivery(deps, bed, {
        name,
        repository,
        path: 'deploy',
        targetNamespace: ns,
        prune: true,
        cluster: { kubeconfig: kubeconfigCopy() },
      });
      await pushFiles(bed, repository, 'main', files(`http://127.0.0.1:${port}/loot`));
      const before = connections;
      const result = await run(name, deps);
      const loot = await core
        .listNamespacedConfigMap({ namespace: ns })
        .then((list) => list.items.filter((cm) => JSON.stringify(cm.data ?? {}).includes('STOLEN')));
      expect({ connections: connections - before, loot: loot.map((cm) => cm.metadata?.name) }).toEqual({
        connections: 0,
        loot: [],
      });
      expect(result.outcome).toBe('Failed');
      expect(result.message).toMatch(/merge key|U\+2028, a line break to kustomize/);
    });
  }
});

// Calendars: ical.js keeps one instance per UID and RECURRENCE-ID and drops the rest silently (a
// moved freeze day that closed nothing), reads RRULE COUNT=0 as "forever", and a text holding two
// VCALENDARs was refused with a TypeError's message.
describe('calendars sluice would read differently from what they say', () => {
  const cal = (body: string) =>
    `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//redteam//EN\r\n${body}END:VCALENDAR\r\n`;
  const master =
    'BEGIN:VEVENT\r\nUID:freeze\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20270104T100000Z\r\nDTEND:20270104T120000Z\r\nRRULE:FREQ=WEEKLY;COUNT=4\r\nSUMMARY:weekly freeze\r\nEND:VEVENT\r\n';
  const instance = (day: string, summary: string) =>
    `BEGIN:VEVENT\r\nUID:freeze\r\nDTSTAMP:20260101T000000Z\r\nRECURRENCE-ID:20270111T100000Z\r\nDTSTART:${day}T100000Z\r\nDTEND:${day}T120000Z\r\nSUMMARY:${summary}\r\nEND:VEVENT\r\n`;

  it('two instances of one occurrence (same UID and RECURRENCE-ID) with their master: refused', () => {
    const ics = cal(
      master + instance('20270112', 'moved to Tuesday') + instance('20270113', 'moved to Wednesday'),
    );
    expect(calendarProblem(ics, 'UTC')).toMatch(
      /has two instances of VEVENT UID "freeze" .*RECURRENCE-ID 2027-01-11T10:00:00Z: only one would be read/,
    );
  });

  it('two instances of one occurrence without their master: refused', () => {
    const ics = cal(instance('20270112', 'a') + instance('20270113', 'b'));
    expect(calendarProblem(ics, 'UTC')).toMatch(/has two instances of VEVENT UID "freeze"/);
  });

  it('one moved instance with its master is still accepted', () => {
    expect(calendarProblem(cal(master + instance('20270112', 'moved')), 'UTC')).toBeUndefined();
  });

  it('RRULE COUNT=0 (ical.js: forever): refused', () => {
    expect(calendarProblem(cal(master.replace('COUNT=4', 'COUNT=0')), 'UTC')).toBe(
      'event "weekly freeze": RRULE COUNT=0 is not a number of occurrences',
    );
  });

  it('two VCALENDARs in one text: refused, saying so', () => {
    expect(calendarProblem(cal(master) + cal(master.replace('UID:freeze', 'UID:other')), 'UTC')).toBe(
      'holds more than one VCALENDAR: give one calendar, with all its events',
    );
  });
});

// sops and kustomize parse with go-yaml, which ends a comment at U+2028; sluice computed the MAC over
// its own parse, where the rest of the line is still comment: a key hidden there reached the
// cluster on a Secret whose MAC "checked out".
describe('a sops file with a key hidden behind U+2028 in a comment', () => {
  it('is refused naming the file; the injected key reaches nothing', async () => {
    const ns = uniqueName('rt-sops');
    await createNamespace(kc, ns);
    const name = uniqueName('rt-sops');
    const repository = uniqueName('redteam/sops');
    await registerDelivery(deps, bed, {
      name,
      repository,
      targetNamespace: ns,
      prune: true,
      decryption: sopsDecryption(),
    });
    const tampered = sopsFixture('kms-secret.yaml').replace(
      '    name: db-credentials\n',
      '    name: db-credentials # note\u2028    annotations: {injected: "yes"}\n',
    );
    await pushFiles(bed, repository, 'main', {
      'kustomization.yaml': 'resources: [db.yaml]\n',
      'db.yaml': tampered,
    });
    const result = await run(name, deps);
    const secrets = await core.listNamespacedSecret({ namespace: ns });
    expect(secrets.items.map((secret) => secret.metadata?.annotations ?? {})).toEqual([]);
    expect(result.outcome).toBe('Failed');
    expect(result.message).toMatch(/db\.yaml.*U\+2028/);
  });
});
