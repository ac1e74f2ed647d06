// Runs one invocation of a packaged Lambda handler bundle in this process, as the Node.js runtime
// would: `node run-handler.mjs <bundle dir> <invocation file>`. The invocation file holds the event
// and the context's fields; the answer (or the error, as Lambda reports it) is written to
// `<invocation file>.out`, because the handler's own logs go to stdout.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [bundleDir, invocationFile] = process.argv.slice(2);
const { event, context, timeoutMs } = JSON.parse(readFileSync(invocationFile, 'utf8'));
const deadline = Date.now() + timeoutMs;
const answer = (result) => writeFileSync(`${invocationFile}.out`, JSON.stringify(result));
try {
  const { handler } = await import(pathToFileURL(join(bundleDir, 'index.mjs')).href);
  const result = await handler(event, { ...context, getRemainingTimeInMillis: () => deadline - Date.now() });
  answer({ result: result ?? null });
} catch (error) {
  answer({ error: { errorType: error?.name ?? 'Error', errorMessage: String(error?.message ?? error) } });
}
process.exit(0);
