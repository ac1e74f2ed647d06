import { printable, printableJson } from '../../functions/core/access/audit-text.ts';

/**
 * Prints rows as an aligned table with a header; `paint` may colour a cell after it is padded.
 * Control characters in a cell are written out (`\n`, `\u001b`): a stored value cannot add a row
 * or send the terminal an escape sequence.
 */
export function printTable(
  headers: readonly string[],
  cellsOf: readonly (readonly string[])[],
  paint: (text: string, column: number) => string = (text) => text,
): void {
  const rows = cellsOf.map((row) => row.map(printable));
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[], painted: boolean) =>
    cells
      .map((cell, i) => {
        const padded = i === cells.length - 1 ? cell : cell.padEnd(widths[i]!);
        return painted ? paint(padded, i) : padded;
      })
      .join('  ')
      .trimEnd();
  process.stdout.write(
    `${[colour.bold(line(headers, false)), ...rows.map((row) => line(row, true))].join('\n')}\n`,
  );
}

/** Green for a good state word, red for a bad one, as is for anything else. */
export function paintState(text: string): string {
  const word = text.trim();
  if (['open', 'True', 'Succeeded'].includes(word)) return colour.green(text);
  if (['closed', 'False', 'Failed', 'GateClosed'].includes(word)) return colour.red(text);
  return text;
}

/**
 * Prints a value as JSON. JSON.stringify writes DEL, C1 controls and the Unicode separators as
 * they are; they are written out as `\uXXXX` too (still the same JSON), so none reaches the terminal.
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${printableJson(JSON.stringify(value, null, 2) ?? 'undefined')}\n`);
}

/** `45s`, `3m`, `2h`, `4d`: a rough span for people. */
function span(ms: number): string {
  const seconds = Math.round(Math.abs(ms) / 1000);
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** `3m ago`, `2h ago`: how long before `now` a time was. */
export function ago(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '-';
  return `${span(Math.max(0, now - Date.parse(iso)))} ago`;
}

/** `in 3h` for a time after `now`, `2m ago` for one before. */
export function relative(iso: string, now = Date.now()): string {
  const delta = Date.parse(iso) - now;
  return delta >= 0 ? `in ${span(delta)}` : `${span(delta)} ago`;
}

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2, skipped: 3, blocked: 4, changes: 5 } as const;

/** Colour for a terminal; plain text when output is piped or NO_COLOR is set. */
const useColour = process.stdout.isTTY === true && !process.env.NO_COLOR;
const paint = (code: string) => (text: string) => (useColour ? `\u001b[${code}m${text}\u001b[0m` : text);
export const colour = {
  green: paint('32'),
  yellow: paint('33'),
  red: paint('31'),
  bold: paint('1'),
  dim: paint('2'),
};
