import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { jsonProtocol } from './aws-json.ts';

const TARGET_PREFIX = 'secretsmanager.';

class SecretsManagerError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

interface StoredSecret {
  readonly arn: string;
  readonly name: string;
  secretString: string;
  versionId: string;
}

/**
 * A small in-memory server for the Secrets Manager JSON 1.1 protocol (`CreateSecret`,
 * `PutSecretValue`, `GetSecretValue`), so `@aws-sdk/client-secrets-manager` is exercised over the
 * wire locally (age identities for SOPS). Request signatures are not checked.
 */
export function createSecretsManagerEndpoint(options: { region: string; account: string }): Server {
  const secrets = new Map<string, StoredSecret>();
  const find = (id: unknown): StoredSecret => {
    const secret = secrets.get(String(id)) ?? [...secrets.values()].find((s) => s.arn === id);
    if (!secret)
      throw new SecretsManagerError(
        'ResourceNotFoundException',
        "Secrets Manager can't find the specified secret.",
      );
    return secret;
  };
  const handlers: Record<string, (input: Record<string, unknown>) => unknown> = {
    CreateSecret(input) {
      const name = String(input.Name ?? '');
      if (!name) throw new SecretsManagerError('InvalidParameterException', 'Name is required');
      if (secrets.has(name))
        throw new SecretsManagerError('ResourceExistsException', `the secret ${name} already exists`);
      const arn = `arn:aws:secretsmanager:${options.region}:${options.account}:secret:${name}-${randomBytes(3).toString('hex')}`;
      const secret = {
        arn,
        name,
        secretString: String(input.SecretString ?? ''),
        versionId: randomBytes(8).toString('hex'),
      };
      secrets.set(name, secret);
      return { ARN: arn, Name: name, VersionId: secret.versionId };
    },
    PutSecretValue(input) {
      const secret = find(input.SecretId);
      secret.secretString = String(input.SecretString ?? '');
      secret.versionId = randomBytes(8).toString('hex');
      return { ARN: secret.arn, Name: secret.name, VersionId: secret.versionId };
    },
    GetSecretValue(input) {
      const secret = find(input.SecretId);
      return {
        ARN: secret.arn,
        Name: secret.name,
        SecretString: secret.secretString,
        VersionId: secret.versionId,
      };
    },
  };
  return createServer(
    jsonProtocol(TARGET_PREFIX, ({ body, target, operation, reply }) => {
      const handler = operation === undefined ? undefined : handlers[operation];
      try {
        if (!handler)
          throw new SecretsManagerError(
            'UnknownOperationException',
            `operation ${target || '(none)'} is not served locally`,
          );
        reply(200, handler(JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>));
      } catch (error) {
        const known = error instanceof SecretsManagerError;
        const type = known ? error.type : 'InternalServiceError';
        reply(known ? 400 : 500, { __type: type, message: (error as Error).message }, type);
      }
    }),
  );
}

/** True for a request meant for Secrets Manager (by its JSON 1.1 target). */
export const isSecretsManagerRequest = (target: string | string[] | undefined): boolean =>
  String(target ?? '').startsWith(TARGET_PREFIX);
