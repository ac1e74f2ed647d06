// Reading a build's YAML: the document pre-count, the limits checked before and while parsing,
// origins and messages as before, and a parse that lets the event loop turn.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SluiceError } from '../../../functions/core/errors.ts';
import { DEFAULT_BUILD_LIMITS, type BuildLimits } from '../../../functions/core/limits.ts';
import { buildManifests } from '../../../functions/core/manifests/build.ts';
import { countDocuments } from '../../../functions/core/manifests/count.ts';
import { loadManifests, parseManifests, parseOptions } from '../../../functions/core/manifests/load.ts';
import { formatBytes } from '../../../functions/core/limits.ts';
import { pacer } from '../../../functions/core/pacer.ts';
import { artifact, configMap, deliveryWith, kubectl } from './fixtures.ts';

const docs = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => configMap(`cm-${from + i}`, { key: `v${i}` })).join('---\n');

async function refusal(work: Promise<unknown>): Promise<SluiceError> {
  const error = await work.then(
    () => new Error('expected a refusal'),
    (caught: unknown) => caught,
  );
  if (!(error instanceof SluiceError)) throw error;
  return error;
}

const limits = (overrides: Partial<BuildLimits>): BuildLimits => ({ ...DEFAULT_BUILD_LIMITS, ...overrides });

describe('countDocuments', () => {
  it.each([
    ['', 0],
    ['a: 1\n', 1],
    ['---\na: 1\n', 1],
    ['---\na: 1\n---\nb: 2\n', 2],
    ['a: 1\n---\nb: 2\n---\n', 2],
    ['---\n---\n# only a comment\n---\n', 0],
    ['--- a\n--- b\n--- # comment\n', 2],
    ['%YAML 1.2\n---\na: 1\n', 1],
    ['a: 1\n...\n# between\n...\nb: 2\n', 2],
    ['\uFEFF---\na: 1\n', 1],
    ['x: |\n  ---\n  y\n', 1],
    ['{"apiVersion": "v1", "kind": "List", "items": [{}, {}]}', 1],
  ])('%j holds %i documents that are not empty', (text, expected) => {
    expect(countDocuments(text)).toBe(expected);
    const nonEmpty = [...parseAllDocuments(text)].filter((doc) => doc.toJS() != null).length;
    expect(countDocuments(text)).toBeGreaterThanOrEqual(nonEmpty);
  });

  it('counts thousands of documents without parsing them', () => {
    expect(countDocuments(docs(5000))).toBe(5000);
  });
});

describe('parseManifests', () => {
  it('names each document by its file and index, drops empty ones, expands Lists', async () => {
    const text = `---\n${configMap('a', { k: 'v' })}---\n---\n${configMap('b', { k: 'v' })}---\napiVersion: v1\nkind: ConfigMapList\nitems:\n  - ${configMap('c', { k: 'v' }).trim().split('\n').join('\n    ')}\n`;
    const manifests = await parseManifests(text, 'deploy/app.yaml');
    expect(manifests.map((m) => [m.object.metadata?.name, m.origin])).toEqual([
      ['a', 'deploy/app.yaml'],
      ['b', 'deploy/app.yaml#2'],
      ['c', 'deploy/app.yaml#3 items[0]'],
    ]);
  });

  // The messages parseAllDocuments gave before parsing was streamed, built the same way.
  it.each([
    'apiVersion: v1\nkind: ConfigMap\nkind: Secret\n',
    `${configMap('ok', { k: 'v' })}---\na: [1, 2\n`,
    'a: "unclosed\nb: 1\n',
    'a: 1\n  b: 2\n',
    '\n\n   \n  - x\n y\n',
    `a: ${'x'.repeat(120)} : b\n`,
    'a: 1\nb:\n  c: 1\n  c: 2\n',
    '&x k: 1\n!!str k: 2\n',
    '? k\n: 1\n? k\n: 2\n',
    'x:\n  - {q: 1, w: 2, q: 3}\n',
    '1: a\n0x1: b\n',
    ': 1\n: 2\n',
    'a: 1\nb: [\na: 2\n',
    'a: 1\na: 2\nb: [1, 2\n',
  ])('words a YAML error as before: %j', async (text) => {
    const parsed = [...parseAllDocuments(text, { prettyErrors: true })];
    const error = parsed.find((doc) => doc.errors.length > 0)!.errors[0]!;
    const where = error.linePos?.[0] ? ` line ${error.linePos[0].line}, column ${error.linePos[0].col}` : '';
    const expected = `f.yaml:${where}: invalid YAML: ${error.message.split('\n')[0]}`;
    expect((await refusal(parseManifests(text, 'f.yaml'))).message).toBe(expected);
  });

  it(
    'finds a repeated key in a map of 50,000 keys in linear time (yaml compares every pair)',
    { timeout: 15_000 },
    async () => {
      const keys = Array.from({ length: 50_000 }, (_, i) => `  key-${i}: value-${i}`);
      const text = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide\ndata:\n${keys.join('\n')}\n  key-7: again\n`;
      expect((await refusal(parseManifests(text, 'wide.yaml'))).message).toBe(
        'wide.yaml: line 50006, column 3: invalid YAML: Map keys must be unique at line 50006, column 3:',
      );
      const manifests = await parseManifests(text.replace('key-7: again', 'key-last: again'), 'wide.yaml');
      expect(Object.keys(manifests[0]!.object.data as object)).toHaveLength(50_001);
    },
  );

  it('keeps the other refusals: an alias bomb, a top-level list', async () => {
    const bomb =
      'a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: &d [*c, *c]\ne: &e [*d, *d]\nf: &f [*e, *e]\ng: [*f, *f, *f]\n';
    expect(
      (await refusal(parseManifests(`${configMap('ok', { k: 'v' })}---\n${bomb}`, 'f.yaml'))).message,
    ).toMatch(/^f\.yaml#1: invalid YAML: Excessive alias count/);
    expect((await refusal(parseManifests('[{"kind": "ConfigMap"}]', 'l.json'))).message).toBe(
      'l.json: a manifest must be an object, not a list',
    );
  });

  it('lets timers run while it parses', async () => {
    const text = docs(3000);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      // The old parse ran start to end in one go: no timer could fire before it returned.
      const manifests = await parseManifests(text, 'many.yaml', { ...parseOptions(), pacer: pacer(1) });
      expect(manifests).toHaveLength(3000);
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
    }
  });

  it('looks at the clock within a file of a few big documents, not only at its end', async () => {
    // A block scalar is one token: 20 documents of 200 KiB are fewer than 512 tokens in all.
    const lines = Array.from({ length: 2000 }, (_, i) => String(i).padStart(99, 'x'));
    const block = lines.map((line) => `    ${line}`).join('\n');
    const text = Array.from(
      { length: 20 },
      (_, i) => `${configMap(`big-${i}`, {})}  big: |\n${block}\n`,
    ).join('---\n');
    let looks = 0;
    const counting = { pause: () => ((looks += 1), Promise.resolve()) };
    const manifests = await parseManifests(text, 'big.yaml', { ...parseOptions(), pacer: counting });
    expect(manifests).toHaveLength(20);
    expect((manifests[19]!.object.data as Record<string, string>).big).toBe(`${lines.join('\n')}\n`);
    // A look after each document's 200 KiB token at least; before, one at the end of the file.
    expect(looks).toBeGreaterThanOrEqual(20);
  });

  it('stops at the first object past maxObjects, List items counted one by one', async () => {
    const list = `apiVersion: v1\nkind: List\nitems:\n${[0, 1, 2, 3].map((i) => `  - {apiVersion: v1, kind: ConfigMap, metadata: {name: i${i}}}`).join('\n')}\n`;
    // The broken document after the List is never reached.
    const text = `${configMap('first', { k: 'v' })}---\n${list}---\nnot: [valid\n`;
    const error = await refusal(parseManifests(text, 'deploy/list.yaml', parseOptions(4)));
    expect(error.reason).toBe('BuildFailed');
    expect(error.message).toBe(
      'deploy/list.yaml#1 items[3]: object 5 of the build is more than the limit maxObjects (4 objects); parsing stopped here',
    );
    await expect(
      parseManifests(`${configMap('first', { k: 'v' })}---\n${list}`, 'ok.yaml', parseOptions(5)),
    ).resolves.toHaveLength(5);
  });
});

describe('loadManifests: limits checked before parsing', () => {
  const revision = 'main@sha256:test';

  it('refuses more YAML documents than maxObjects, naming the path, the files, the count and the limit', async () => {
    // Broken YAML everywhere: a refusal that names it would mean the files were parsed.
    const broken = (n: number, from: number) => `${docs(n, from)}\n---\nnot: [valid\n`;
    const files = artifact({
      'deploy/a.yaml': broken(6, 0),
      'deploy/b.yaml': broken(3, 10),
      'other/c.yaml': docs(50),
    });
    const error = await refusal(loadManifests(files, 'deploy', revision, limits({ maxObjects: 10 })));
    expect(error.reason).toBe('BuildFailed');
    expect(error.message).toBe(
      "artifact main@sha256:test: path 'deploy' holds 11 YAML documents (7 in deploy/a.yaml, 4 in deploy/b.yaml), more than the limit maxObjects (10 objects); nothing was parsed",
    );
  });

  it('accepts exactly maxObjects documents', async () => {
    const files = artifact({ 'deploy/a.yaml': docs(6), 'deploy/b.yaml': `---\n${docs(4, 10)}---\n` });
    const manifests = await loadManifests(files, 'deploy', revision, limits({ maxObjects: 10 }));
    expect(manifests).toHaveLength(10);
    expect(manifests.at(-1)?.origin).toBe('deploy/b.yaml#3');
  });

  it('refuses manifests larger than maxManifestBytes; other files do not count', async () => {
    const a = docs(5);
    const b = docs(5, 10);
    const max = Buffer.byteLength(a) + Buffer.byteLength(b);
    const files = (extra: string) =>
      artifact({
        'deploy/a.yaml': a,
        'deploy/b.yaml': b + extra,
        'deploy/README.md': 'x'.repeat(max),
        'other/c.yaml': a,
      });
    await expect(
      loadManifests(files(''), 'deploy', revision, limits({ maxManifestBytes: max })),
    ).resolves.toHaveLength(10);
    const error = await refusal(
      loadManifests(files('#'), 'deploy', revision, limits({ maxManifestBytes: max })),
    );
    expect(error.reason).toBe('BuildFailed');
    expect(error.message).toMatch(
      new RegExp(
        `^artifact main@sha256:test: path 'deploy' holds ${formatBytes(max + 1)} of manifests \\(.+ in deploy/b\\.yaml, .+ in deploy/a\\.yaml\\), more than the limit maxManifestBytes \\(.+\\); nothing was parsed$`,
      ),
    );
  });
});

describe('kustomize builds: the same limits on its output', () => {
  // Generators: one small input document makes six objects, so the output, not the files
  // kustomize reads (held to the same limits before it runs), is what passes the limits.
  const generated = Array.from(
    { length: 6 },
    (_, i) => `  - {name: generated-${i}, literals: [key=value-${i}]}`,
  );
  const kustomization = {
    'app/kustomization.yaml': `generatorOptions: {disableNameSuffixHash: true}\nconfigMapGenerator:\n${generated.join('\n')}\n`,
  };
  const buildWith = (buildLimits: BuildLimits) =>
    buildManifests(artifact(kustomization), deliveryWith({ path: 'app' }), 'main@sha256:test', {
      kubectl: kubectl(),
      limits: buildLimits,
    });

  it('refuses output with more documents than maxObjects before parsing it, and accepts exactly the limit', async () => {
    const error = await refusal(buildWith(limits({ maxObjects: 5 })));
    expect(error.reason).toBe('BuildFailed');
    expect(error.message).toBe(
      'kustomize build of app/kustomization.yaml: its output holds 6 YAML documents, more than the limit maxObjects (5 objects); nothing was parsed',
    );
    await expect(buildWith(limits({ maxObjects: 6 }))).resolves.toHaveLength(6);
  });

  it('stops kustomize once its output passes maxManifestBytes', async () => {
    const error = await refusal(buildWith(limits({ maxManifestBytes: 400 })));
    expect(error.reason).toBe('BuildFailed');
    expect(error.message).toBe(
      'kustomize build of app/kustomization.yaml: kubectl kustomize was stopped: its output is larger than the limit of 400 bytes (maxManifestBytes)',
    );
  });
});
