// The table's key and TTL attribute names, apart from the code that reads and writes it: the CDK
// construct creates the same table without importing the AWS SDK into a user's app.

/** The single table's key and TTL attribute names; the CDK construct creates the same table. */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'expiresAt',
} as const;
