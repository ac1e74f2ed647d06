import { join } from 'node:path';
import { freePort, startDaemon, waitUntilReady } from './processes.ts';

export interface DynamoDbLocal {
  readonly pid: number;
  readonly endpoint: string;
}

/**
 * DynamoDB Local (in memory). It has no bind-address option and listens on every interface;
 * clients only ever use 127.0.0.1.
 */
export async function startDynamoDbLocal(java: string, home: string, dir: string): Promise<DynamoDbLocal> {
  const port = await freePort();
  const emulator = join(home, 'emulator');
  const log = join(dir, 'dynamodb-local.log');
  const pid = startDaemon(
    java,
    [
      '-Xmx512m',
      `-Djava.library.path=${join(emulator, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(emulator, 'DynamoDBLocal.jar'),
      '-inMemory',
      // One database for every key pair and Region, as an account's tables are: the functions of a
      // locally deployed stack sign with their roles' keys and must see the table the deploy made.
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    log,
    { cwd: dir }, // it writes dynamodb-local-metadata.json into its working directory
  );
  const endpoint = `http://127.0.0.1:${port}`;
  // Any HTTP answer (400 for an unsigned GET) means the server is accepting requests.
  await waitUntilReady({
    name: 'DynamoDB Local',
    pid,
    logFile: log,
    ready: async () => (await fetch(endpoint)).status > 0,
  });
  return { pid, endpoint };
}
