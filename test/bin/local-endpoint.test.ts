// Which DynamoDB endpoints `sluice gate open` treats as the local components (no unverified-claim warning).
import { describe, expect, it } from 'vitest';
import { isLocalEndpoint } from '../../bin/commands/gates.ts';

describe('isLocalEndpoint', () => {
  it('loopback endpoints are local; AWS (no override) and any other host are not', () => {
    for (const endpoint of ['http://127.0.0.1:8000', 'http://localhost:4566', 'http://[::1]:8000'])
      expect(isLocalEndpoint(endpoint)).toBe(true);
    for (const endpoint of [
      undefined,
      'https://dynamodb.eu-west-1.amazonaws.com',
      'https://vpce-0abc.dynamodb.eu-west-1.vpce.amazonaws.com',
      'http://127.0.0.1.example.com',
      'not a url',
    ])
      expect(isLocalEndpoint(endpoint)).toBe(false);
  });
});
