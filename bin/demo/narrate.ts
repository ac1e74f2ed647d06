import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../sluice-cli.mjs', import.meta.url));
const tty = process.stdout.isTTY === true;
const style = (code: string) => (text: string) => (tty ? `\u001b[${code}m${text}\u001b[0m` : text);
export const bold = style('1');
const dim = style('2');
const green = style('32');
const cyan = style('36');

/** A demo step that did not do what it said. */
export class DemoFailure extends Error {
  override readonly name = 'DemoFailure';
}

export function heading(index: number, total: number, title: string): void {
  process.stdout.write(`\n${bold(`[${index}/${total}] ${title}`)}\n`);
}

export function say(text: string): void {
  process.stdout.write(`${dim(text)}\n`);
}

/** Prints a check that passed, or stops the demo with what went wrong. */
export function check(ok: boolean, what: string, otherwise: string): void {
  if (!ok) throw new DemoFailure(`${what}: ${otherwise}`);
  process.stdout.write(`${green('✓')} ${what}\n`);
}

/** An argument as a shell user would type it. */
function quoted(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

/** A command line as a user would type it: `name` (kubectl, not its full path) and the arguments quoted. */
export const commandLine = (name: string, args: readonly string[]): string =>
  `${name} ${args.map(quoted).join(' ')}`;

/** Runs a command, shows it and its output, and returns the output and exit code. */
export async function shell(
  command: string,
  args: readonly string[],
  shown = commandLine(command, args),
): Promise<{ code: number; output: string }> {
  process.stdout.write(`${cyan('$')} ${shown}\n`);
  const child = spawn(command, args, { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exit) => resolve(exit ?? 1));
  });
  if (output.trim()) process.stdout.write(`${indent(output)}\n`);
  return { code, output };
}

/** Runs the sluice CLI (the same one users run) and checks its exit code. */
export async function sluice(args: readonly string[], expectedCode = 0): Promise<string> {
  const { code, output } = await shell(process.execPath, [CLI, ...args], commandLine('sluice', args));
  if (code !== expectedCode) {
    throw new DemoFailure(`sluice ${args.join(' ')} exited ${code}, expected ${expectedCode}`);
  }
  return output;
}
