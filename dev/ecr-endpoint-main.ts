// Process entry for the local AWS API endpoint: `tsx ecr-endpoint-main.ts <port>` with the
// registry's URL and credentials in SLUICE_ECR_REGISTRY_URL / _USERNAME / _PASSWORD. It answers
// the ECR API in front of the registry, Secrets Manager and CloudWatch alarms (in memory) and STS
// GetCallerIdentity (for the test identities), CloudFormation DescribeStacks (the stacks in
// SLUICE_CLOUDFORMATION_STACKS), EKS DescribeCluster and the API servers' EKS token authenticator
// (the clusters in SLUICE_EKS_CLUSTERS) and EventBridge PutEvents (routed by the templates in
// SLUICE_EVENTBRIDGE_RULES, deliveries recorded in SLUICE_EVENTBRIDGE_DELIVERIES) on the same port.
import { createServer } from 'node:http';
import { handleCloudFormationRequest, isCloudFormationRequest } from './cloudformation-endpoint.ts';
import { createCloudWatchEndpoint, isCloudWatchRequest } from './cloudwatch-endpoint.ts';
import { createEcrEndpoint } from './ecr-endpoint.ts';
import { handleEksTokenReview, isEksAuthenticatorRequest } from './eks-authenticator.ts';
import { handleEksRequest, isEksRequest } from './eks-endpoint.ts';
import { eventBridgeHandler, isEventBridgeRequest } from './eventbridge-endpoint.ts';
import { createSecretsManagerEndpoint, isSecretsManagerRequest } from './secrets-manager-endpoint.ts';
import { LOCAL_IDENTITY, TEST_IDENTITIES } from './sigv4-identity.ts';
import { handleStsRequest, isStsRequest } from './sts-endpoint.ts';

const port = Number(process.argv[2]);
const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const ecr = createEcrEndpoint({
  registryUrl: env('SLUICE_ECR_REGISTRY_URL'),
  username: env('SLUICE_ECR_USERNAME'),
  password: env('SLUICE_ECR_PASSWORD'),
});
const secretsManager = createSecretsManagerEndpoint({
  region: process.env.SLUICE_AWS_REGION ?? 'us-east-1',
  account: '000000000000',
});
const cloudWatch = createCloudWatchEndpoint({
  region: process.env.SLUICE_AWS_REGION ?? 'us-east-1',
  account: '000000000000',
  identities: Object.values(TEST_IDENTITIES),
});
const knownIdentities = [...Object.values(TEST_IDENTITIES), LOCAL_IDENTITY];
const cloudFormation = {
  stacksDir: env('SLUICE_CLOUDFORMATION_STACKS'),
  identities: knownIdentities,
  region: process.env.SLUICE_AWS_REGION ?? 'us-east-1',
  account: '000000000000',
};
const eks = {
  clustersDir: env('SLUICE_EKS_CLUSTERS'),
  identities: knownIdentities,
  account: '000000000000',
};
const eventBridge = eventBridgeHandler({
  rulesDir: env('SLUICE_EVENTBRIDGE_RULES'),
  deliveriesDir: env('SLUICE_EVENTBRIDGE_DELIVERIES'),
  identities: knownIdentities,
  region: process.env.SLUICE_AWS_REGION ?? 'us-east-1',
  account: '000000000000',
});
const server = createServer((req, res) => {
  if (isEventBridgeRequest(req.headers['x-amz-target'])) return eventBridge(req, res);
  if (isEksAuthenticatorRequest(req)) return handleEksTokenReview(eks, req, res);
  if (isEksRequest(req)) return handleEksRequest(eks, req, res);
  if (isStsRequest(req)) return handleStsRequest(req, res);
  if (isCloudFormationRequest(req)) return handleCloudFormationRequest(cloudFormation, req, res);
  if (isCloudWatchRequest(req.headers['x-amz-target'])) return cloudWatch.emit('request', req, res);
  (isSecretsManagerRequest(req.headers['x-amz-target']) ? secretsManager : ecr).emit('request', req, res);
});
server.listen(port, '127.0.0.1', () =>
  process.stdout.write(
    `ECR, Secrets Manager, CloudWatch, STS, CloudFormation, EKS and EventBridge endpoint on http://127.0.0.1:${port}\n`,
  ),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
