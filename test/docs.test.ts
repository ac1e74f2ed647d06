// The docs hold together: README.md stays a quick start (at most 300 lines, short enough to need
// no contents list), ARCHITECTURE.md and every doc in docs/ open with a contents list naming each
// of its sections, and every relative link of README.md, ARCHITECTURE.md and docs/*.md leads to a
// file that exists and, with an #anchor into a Markdown file, to a heading GitHub gives that anchor.
// (docs/api is typedoc's output, checked by test/package/api-reference.test.ts.)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { outline, withContents } from './support/markdown-outline.ts';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const DOCS = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => join('docs', name))
  .sort();
const WITH_CONTENTS = ['ARCHITECTURE.md', ...DOCS];
const LINKED = ['README.md', ...WITH_CONTENTS];
const README_MAX_LINES = 300;

const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** The `##` sections of `markdown` that no link to its own anchors before the first of them names. */
function missingFromContents(markdown: string): { contents: number; missing: string[] } {
  const { headings, links } = outline(markdown);
  const first = headings.find((heading) => heading.level === 2);
  if (!first) return { contents: 0, missing: [] };
  const listed = new Set(
    links
      .filter((link) => link.line < first.line && link.href.startsWith('#'))
      .map((link) => decodeURIComponent(link.href.slice(1))),
  );
  return {
    contents: listed.size,
    missing: headings
      .filter((heading) => heading.level === 2 && !listed.has(heading.anchor))
      .map((heading) => `line ${heading.line}: ## ${heading.text} (#${heading.anchor})`),
  };
}

/**
 * The relative links of `file` (a path from the repository's root) that lead nowhere, each named
 * with its line and why; `readFile` reads a path from the root, or says it is not there.
 */
function brokenLinks(
  file: string,
  markdown: string,
  readFile: (path: string) => string | undefined,
): { checked: number; broken: string[] } {
  const broken: string[] = [];
  let checked = 0;
  for (const { href, line } of outline(markdown).links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:: not ours to check
    checked++;
    const hash = href.indexOf('#');
    const path = decodeURIComponent(hash < 0 ? href : href.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(href.slice(hash + 1));
    const target = path === '' ? file : relative(root, join(root, dirname(file), path));
    if (target.startsWith('..')) {
      broken.push(`${file}:${line}: ${href} leaves the repository`);
      continue;
    }
    const text = target === file ? markdown : readFile(target);
    if (text === undefined) {
      broken.push(`${file}:${line}: ${href}: ${target} does not exist`);
      continue;
    }
    if (anchor === undefined || !target.endsWith('.md')) continue;
    const anchors = outline(text).headings.map((heading) => heading.anchor);
    if (!anchors.includes(anchor))
      broken.push(`${file}:${line}: ${href}: ${target} has no heading #${anchor}`);
  }
  return { checked, broken };
}

/** A path from the root: a file's text, '' for a folder, undefined when there is nothing. */
function fromDisk(path: string): string | undefined {
  const full = join(root, path);
  if (!existsSync(full)) return undefined;
  return path.endsWith('.md') ? readFileSync(full, 'utf8') : '';
}

describe('the anchors GitHub gives headings', () => {
  it('are lower case, without punctuation or markup, spaces as hyphens, repeats numbered', () => {
    const { headings } = outline(
      [
        '# Title',
        '## From `npm install` to `sluice --stack`',
        '## Flux side by side (Flux v2.9.0: source-controller and kustomize-controller v1.9.0)',
        '## The mass-deletion brake (`pruneLimit`)',
        '```sh',
        '# a comment in a code block, no heading',
        '```',
        '### Break-glass',
        '### Break-glass',
      ].join('\n'),
    );
    expect(headings.map((heading) => heading.anchor)).toEqual([
      'title',
      'from-npm-install-to-sluice---stack',
      'flux-side-by-side-flux-v290-source-controller-and-kustomize-controller-v190',
      'the-mass-deletion-brake-prunelimit',
      'break-glass',
      'break-glass-1',
    ]);
  });
});

describe('the checks themselves', () => {
  const docs = new Map([
    ['docs/a.md', '# A\n\n## Present\n'],
    ['docs/b.txt', 'b'],
  ]);
  const inMemory = (path: string) => docs.get(path);

  it('find a missing file, a missing heading, a missing anchor of the same file and a path out of the repository', () => {
    const markdown = [
      '# Doc',
      '[ok](docs/a.md#present) [ok](docs/b.txt) [ok](#doc) [web](https://example.com/x.md#nothing)',
      '[gone](docs/nowhere.md) [no heading](docs/a.md#absent) [no anchor](#absent) [out](../x.md)',
      '`[in code](docs/nowhere.md)`',
    ].join('\n');
    expect(brokenLinks('README.md', markdown, inMemory)).toEqual({
      checked: 7,
      broken: [
        'README.md:3: docs/nowhere.md: docs/nowhere.md does not exist',
        'README.md:3: docs/a.md#absent: docs/a.md has no heading #absent',
        'README.md:3: #absent: README.md has no heading #absent',
        'README.md:3: ../x.md leaves the repository',
      ],
    });
  });

  it('find a section the contents list leaves out', () => {
    const markdown = '# Doc\n\n- [One](#one)\n\n## One\n\n## Two words\n';
    expect(missingFromContents(markdown)).toEqual({
      contents: 1,
      missing: ['line 7: ## Two words (#two-words)'],
    });
    expect(missingFromContents(withContents(markdown))).toEqual({ contents: 2, missing: [] });
  });

  it('withContents writes the list before the first section and replaces the one it wrote', () => {
    const once = withContents('# Doc\n\nIntro.\n\n## One\n\n### Sub\n\n## Two\n');
    expect(once).toBe(
      '# Doc\n\nIntro.\n\n**Contents**\n\n- [One](#one)\n  - [Sub](#sub)\n- [Two](#two)\n\n## One\n\n### Sub\n\n## Two\n',
    );
    expect(withContents(once)).toBe(once);
  });
});

describe('the docs', () => {
  it(`README.md is a quick start: at most ${README_MAX_LINES} lines (the rest is in docs/)`, () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it.each(WITH_CONTENTS)('%s opens with a contents list naming every section', (file) => {
    const { contents, missing } = missingFromContents(read(file));
    expect(contents, `${file} has no contents list before its first section`).toBeGreaterThan(0);
    expect(missing, `${file}: sections its contents list leaves out`).toEqual([]);
  });

  it.each(LINKED)('every relative link of %s leads to a file, and a heading, that exist', (file) => {
    const { checked, broken } = brokenLinks(file, read(file), fromDisk);
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });
});
