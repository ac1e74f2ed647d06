// sluice's pre-apply check of CRD `pattern`s against the real consumer: the kube-apiserver, which
// compiles a CRD's patterns and matches custom resources' strings with Go's regexp. Seeded random
// patterns from a small grammar (nested quantifiers, classes, anchors, alternation, Unicode, flags,
// and some syntax Go refuses) and random strings: per batch, the API server's verdict on the CRD
// (which patterns compile) and on a dry-run of a custom resource per string (which fields match)
// must equal sluice's (artifactCrds, checkCustomResource); and no single match takes 100 ms.
import { ApiException, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/core/clock.ts';
import { compileGoRegexp } from '../../../functions/core/go-regexp.ts';
import { KubeClient } from '../../../functions/core/kube/client.ts';
import { waitForCrdsEstablished } from '../../../functions/core/kube/wait.ts';
import { checkCustomResource } from '../../../functions/core/manifests/crd-schema.ts';
import { artifactCrds } from '../../../functions/core/manifests/crds.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const SEED = 0x39_5eed;
const BATCHES = 4;
const PATTERNS = 40;
const VALUES = 30;
const PER_CALL_MS = 100;

const bed = testbed();
const kc = bed.kubeConfig();
const kube = new KubeClient(kc);
const ns = uniqueName('regex');
const created: KubernetesObject[] = [];

/** mulberry32: a small seeded generator, so a failure can be replayed. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick };
}

const ATOMS = [
  'a',
  'b',
  'é',
  'k',
  'K',
  '\\x{212A}',
  '😀',
  '\\n',
  '.',
  '\\d',
  '\\w',
  '\\s',
  '\\S',
  '\\pL',
  '\\p{Greek}',
  '\\PL',
  '[ab]',
  '[^a]',
  '[[:alpha:]]',
  '[[:^space:]]',
  '[a-c\\d]',
  '[é-ø]',
  '\\.',
  '\\\\',
  'x',
];
const ANCHORS = ['^', '$', '\\A', '\\z', '\\b', '\\B'];
const QUANTIFIERS = ['*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?', '??', '{2,}'];
const FLAGS = ['(?i)', '(?s)', '(?m)', '(?U)', '(?is)', '(?-s)'];
const REFUSED_BY_GO = [
  '\\1',
  '(?=a)',
  '(?<=a)',
  'a**',
  '(',
  '\\Z',
  '[[:foo:]]',
  'x{1001}',
  '[b-a]',
  '(?P<>a)',
];
const ALPHABET = [
  'a',
  'a',
  'b',
  'A',
  'é',
  'É',
  'k',
  'K',
  '\u212a',
  '1',
  '٣',
  ' ',
  '\u00a0',
  '\n',
  '\t',
  'x',
  '😀',
  'Ω',
  '_',
  '.',
  '\\',
];

function randomPattern(rng: ReturnType<typeof generator>): string {
  const term = (depth: number): string => {
    const roll = rng.next();
    if (depth > 3 || roll < 0.35) return rng.pick(ATOMS);
    if (roll < 0.45) return rng.pick(ANCHORS);
    if (roll < 0.7)
      return `${rng.pick(['(', '(?:', '(?i:', '(?s:'])}${expression(depth + 1)})${rng.pick(QUANTIFIERS)}`;
    if (roll < 0.85) return `${term(depth + 1)}${rng.pick(QUANTIFIERS)}`;
    return `(${term(depth + 1)}${rng.pick(QUANTIFIERS)})${rng.pick(QUANTIFIERS)}`; // nested quantifiers
  };
  const expression = (depth: number): string => {
    const parts = Array.from({ length: 1 + Math.floor(rng.next() * 3) }, () => term(depth));
    const concat = parts.join('');
    return rng.next() < 0.25 ? `${concat}|${term(depth)}` : concat;
  };
  let pattern = expression(0);
  if (rng.next() < 0.25) pattern = `${rng.pick(FLAGS)}${pattern}`;
  if (rng.next() < 0.3) pattern = `^${pattern}`;
  if (rng.next() < 0.3) pattern = `${pattern}$`;
  if (rng.next() < 0.06) pattern = `${pattern}${rng.pick(REFUSED_BY_GO)}`;
  return pattern;
}

function randomValue(rng: ReturnType<typeof generator>): string {
  if (rng.next() < 0.08) return `${'a'.repeat(30 + Math.floor(rng.next() * 30))}b`;
  return Array.from({ length: Math.floor(rng.next() * 9) }, () => rng.pick(ALPHABET)).join('');
}

function crdOf(group: string, patterns: readonly string[]) {
  const properties = Object.fromEntries(patterns.map((pattern, i) => [`p${i}`, { type: 'string', pattern }]));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `cases.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'cases', singular: 'case', kind: 'Case' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } },
          },
        },
      ],
    },
  };
}

/** The fields a refused request names (the API server's Status causes). */
function refusedFields(error: unknown): string[] {
  if (!(error instanceof ApiException)) throw error;
  const body = (typeof error.body === 'string' ? JSON.parse(error.body) : error.body) as {
    details?: { causes?: { field?: string }[] };
  };
  return (body.details?.causes ?? []).map((cause) => cause.field ?? '');
}

async function serverRefuses(object: KubernetesObject): Promise<string[]> {
  try {
    await kube.apply(object, { dryRun: true });
    return [];
  } catch (error) {
    return refusedFields(error);
  }
}

const PATTERN_FIELD = /properties\[spec\]\.properties\[(p\d+)\]\.pattern/;

beforeAll(async () => {
  await createNamespace(kc, ns);
  compileGoRegexp('\\pL(?i)k').test('x'); // loads re2js's Unicode tables, once per process
});

afterAll(async () => {
  for (const object of created) await kube.delete(object);
});

describe('CRD patterns: sluice decides as the API server (Go regexp) does', () => {
  it(`${BATCHES} batches of ${PATTERNS} seeded random patterns × ${VALUES} strings`, async () => {
    const rng = generator(SEED);
    const disagreements: string[] = [];
    let compared = 0;
    let refusedPatterns = 0;
    let slowest = 0;
    for (let batch = 0; batch < BATCHES; batch++) {
      const patterns = Array.from({ length: PATTERNS }, () => randomPattern(rng));
      const group = `${uniqueName('rx')}.sluice.test`;
      const crd = crdOf(group, patterns);

      // Which patterns compile: the API server refuses the CRD naming each one that does not.
      const serverBad = new Set(
        (await serverRefuses(crd)).map((field) => PATTERN_FIELD.exec(field)?.[1]).filter(Boolean),
      );
      const oursBad = new Set(
        artifactCrds([{ object: crd, origin: 'crd.yaml' }]).problems.map((p) => PATTERN_FIELD.exec(p)?.[1]),
      );
      patterns.forEach((pattern, i) => {
        compared++;
        if (serverBad.has(`p${i}`) !== oursBad.has(`p${i}`))
          disagreements.push(
            `compile ${JSON.stringify(pattern)}: server ${serverBad.has(`p${i}`) ? 'refuses' : 'accepts'}`,
          );
      });
      refusedPatterns += serverBad.size;

      const kept = patterns.filter((_, i) => !serverBad.has(`p${i}`));
      const live = crdOf(group, kept);
      await kube.apply(live);
      created.push(live);
      await waitForCrdsEstablished(kube, [live], { clock: systemClock, timeoutMs: 30_000 });
      const schema = live.spec.versions[0]!.schema.openAPIV3Schema;

      for (let v = 0; v < VALUES; v++) {
        const value = randomValue(rng);
        const spec = Object.fromEntries(kept.map((_, i) => [`p${i}`, value]));
        const object = {
          apiVersion: `${group}/v1`,
          kind: 'Case',
          metadata: { name: `v${v}`, namespace: ns },
          spec,
        } as KubernetesObject;
        const server = new Set(await serverRefuses(object));
        const ours = new Set(checkCustomResource(schema, object).map((issue) => issue.path));
        kept.forEach((pattern, i) => {
          compared++;
          const field = `spec.p${i}`;
          if (server.has(field) !== ours.has(field))
            disagreements.push(
              `${JSON.stringify(pattern)} on ${JSON.stringify(value)}: server ${server.has(field) ? 'refuses' : 'accepts'}, sluice ${ours.has(field) ? 'refuses' : 'accepts'}`,
            );
          // CPU time: on a shared machine the wall clock also counts other processes' turns.
          const started = process.cpuUsage();
          compileGoRegexp(pattern).test(value);
          const { user, system } = process.cpuUsage(started);
          slowest = Math.max(slowest, (user + system) / 1000);
        });
      }
    }
    console.log(
      `pattern differential (seed ${SEED}): ${compared} verdicts compared, ${refusedPatterns} patterns Go refused, ` +
        `${disagreements.length} disagreements, slowest compile+match ${slowest.toFixed(1)} ms`,
    );
    expect(disagreements.slice(0, 20)).toEqual([]);
    expect(slowest).toBeLessThan(PER_CALL_MS);
  });
});
