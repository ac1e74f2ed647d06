import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

type Ran = { code: number; stdout: string; stderr: string };

/** Runs the sluice CLI as a user does: a separate process, settings from the environment. */
export function sluice(...args: string[]): Promise<Ran> {
  return sluiceIn(process.env, args);
}

/** An AWS principal's key pair (a TestIdentity). */
interface Keys {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/**
 * Runs the CLI signed in as `who` (its keys alone, no profile), its Lambda calls (the function URL
 * look-ups) sent to `lambdaEndpoint`, in `region`.
 */
export function sluiceAs(
  options: { readonly who: Keys; readonly lambdaEndpoint: string; readonly region: string },
  ...args: string[]
): Promise<Ran> {
  const { who } = options;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ACCESS_KEY_ID: who.accessKeyId,
    AWS_SECRET_ACCESS_KEY: who.secretAccessKey,
    AWS_REGION: options.region,
    AWS_ENDPOINT_URL_LAMBDA: options.lambdaEndpoint,
  };
  if (who.sessionToken) env.AWS_SESSION_TOKEN = who.sessionToken;
  else delete env.AWS_SESSION_TOKEN;
  delete env.AWS_PROFILE;
  return sluiceIn(env, args);
}

/** Runs the CLI with exactly `env` (e.g. this process's without SLUICE_TABLE). */
export function sluiceWith(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Ran> {
  return sluiceIn(env, args);
}

async function sluiceIn(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/sluice-cli.mjs', ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
