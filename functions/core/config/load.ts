import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseDocument } from 'yaml';
import { readCalendarFiles } from './calendar-files.ts';
import { ConfigError, isRecord } from './issues.ts';
import { parseConfig } from './parse.ts';
import type { SluiceConfig } from './types.ts';

/** Reads and validates a YAML config file; syntax and schema errors both come as a ConfigError naming the file. */
export function loadConfigFile(path: string): SluiceConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [{ path: '', message: `cannot read the file: ${(error as Error).message}` }]);
  }
  return parseConfig(withCalendarFiles(parseYaml(text, path), path), path);
}

/** The config `raw` read from `path`, its calendars' files (relative to the file) read in. */
export function withCalendarFiles(raw: unknown, path: string): unknown {
  if (!isRecord(raw) || raw.gates === undefined) return raw;
  return { ...raw, gates: readCalendarFiles(raw.gates, dirname(path), path) };
}

/** Parses YAML text; an empty document is an empty config. */
export function parseYaml(text: string, origin: string): unknown {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      origin,
      document.errors.map((error) => {
        const at = error.linePos?.[0];
        const where = at ? `line ${at.line}, column ${at.col}: ` : '';
        const problem = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
        return { path: '', message: `${where}YAML syntax error: ${problem}` };
      }),
    );
  }
  return document.toJS() ?? {};
}
