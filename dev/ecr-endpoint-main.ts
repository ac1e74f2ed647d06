// Process entry for the local ECR API endpoint: `tsx ecr-endpoint-main.ts <port>` with the
// registry's URL and credentials in SLUICE_ECR_REGISTRY_URL / _USERNAME / _PASSWORD.
import { createEcrEndpoint } from './ecr-endpoint.ts';

const port = Number(process.argv[2]);
const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const server = createEcrEndpoint({
  registryUrl: env('SLUICE_ECR_REGISTRY_URL'),
  username: env('SLUICE_ECR_USERNAME'),
  password: env('SLUICE_ECR_PASSWORD'),
});
server.listen(port, '127.0.0.1', () => process.stdout.write(`ECR endpoint on http://127.0.0.1:${port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
