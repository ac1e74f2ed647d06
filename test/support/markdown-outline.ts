// The outline of a Markdown file as GitHub shows it: its headings, each with the anchor GitHub
// gives it (github-slugger: lower case, punctuation dropped, spaces to hyphens, a repeated one
// numbered -1, -2, …), and its links. Parsed by markdown-it (CommonMark, as GitHub's cmark-gfm),
// so a `#` line inside a code block is no heading and a link inside code is no link.
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';

export interface Heading {
  readonly level: number;
  /** The heading's text as rendered (markup and backticks gone), which GitHub slugs. */
  readonly text: string;
  /** The heading as written, markup included. */
  readonly source: string;
  readonly anchor: string;
  /** 1-based. */
  readonly line: number;
}

/** A link's target as written, and its 1-based line. */
export type Link = { readonly href: string; readonly line: number };

export interface Outline {
  readonly headings: readonly Heading[];
  readonly links: readonly Link[];
}

interface InlineToken {
  readonly type: string;
  readonly content: string;
  readonly children: readonly InlineToken[] | null;
  attrGet(name: string): string | null;
}

const parser = new MarkdownIt({ html: true });

/** What a reader sees of inline markup: text and code spans, without the markup around them. */
function renderedText(tokens: readonly InlineToken[]): string {
  return tokens
    .map((token) =>
      token.type === 'text' || token.type === 'code_inline'
        ? token.content
        : token.children
          ? renderedText(token.children)
          : '',
    )
    .join('');
}

export function outline(markdown: string): Outline {
  const tokens = parser.parse(markdown, {});
  const slugger = new GithubSlugger();
  const headings: Heading[] = [];
  const links: Link[] = [];
  // Inline tokens of table cells have no line of their own: their row's is the last one seen.
  let blockLine = 1;
  tokens.forEach((token, i) => {
    if (token.map) blockLine = token.map[0] + 1;
    if (token.type === 'heading_open') {
      const inline = tokens[i + 1]!;
      const text = renderedText(inline.children ?? []);
      headings.push({
        level: Number(token.tag.slice(1)),
        text,
        source: inline.content,
        anchor: slugger.slug(text),
        line: blockLine,
      });
    }
    if (token.type !== 'inline') return;
    let line = blockLine;
    for (const child of token.children ?? []) {
      if (child.type === 'softbreak' || child.type === 'hardbreak') line++;
      const href = child.type === 'link_open' ? child.attrGet('href') : null;
      if (href !== null) links.push({ href, line });
    }
  });
  return { headings, links };
}

const CONTENTS_TITLE = '**Contents**';
/** A contents list as withContents writes it: the title, a blank line, then `- [..](#..)` items. */
const CONTENTS_BLOCK = /^\*\*Contents\*\*\n\n(?:[ ]*- \[[^\n]*\]\(#[^)\n]*\)\n)+\n?/m;

/**
 * `markdown` with a contents list of its `##` sections (and their `###` ones, indented) just
 * before the first of them, in place of the one it had: for the docs a program writes.
 */
export function withContents(markdown: string): string {
  const text = markdown.replace(CONTENTS_BLOCK, '');
  const { headings } = outline(text);
  const sections = headings.filter((heading) => heading.level === 2 || heading.level === 3);
  const first = sections.find((heading) => heading.level === 2);
  if (!first) return text;
  const items = sections
    .filter((heading) => heading.line >= first.line)
    .map((heading) => `${heading.level === 3 ? '  ' : ''}- [${heading.source}](#${heading.anchor})`);
  const lines = text.split('\n');
  lines.splice(first.line - 1, 0, CONTENTS_TITLE, '', ...items, '');
  return lines.join('\n');
}
