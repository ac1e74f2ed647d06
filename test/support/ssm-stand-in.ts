// The SSM stand-in (dev/ssm-endpoint.ts) set up for a gate's console (runbook) approvals: the
// identities it verifies, the runbooks the construct makes, and a server on a free port whose
// invoke step calls the test's gate function.
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { AutomationDocument, SsmEndpoint } from '../../dev/ssm-endpoint.ts';
import type { TestIdentity } from '../../dev/sigv4-identity.ts';
import type { Gate } from '../../functions/core/config/index.ts';
import { runbookContent } from '../../lib/runbooks.ts';
import { listenSsm, ssmClient, ssmIdentity } from './ssm.ts';

export const ACCOUNT = '000000000000';

/** An identity the stand-in verifies SigV4 for, with keys made from its name. */
export const identity = ssmIdentity;
export const ALICE = identity('alice', `arn:aws:iam::${ACCOUNT}:user/alice`);
export const BOB = identity('bob', `arn:aws:iam::${ACCOUNT}:user/bob`);
export const REQUESTER = identity('requester', `arn:aws:sts::${ACCOUNT}:assumed-role/Developer/dev`);
/** The gate function's own identity: it reads executions with it. */
export const GATE_FUNCTION = identity('gatefn', `arn:aws:sts::${ACCOUNT}:assumed-role/sluice-gate/fn`);
export const FUNCTION_ARN = `arn:aws:lambda:us-east-1:${ACCOUNT}:function:sluice-gate:runbooks`;
/** The context Lambda gives the gate function when the runbooks' invoke step calls it. */
export const RUNBOOKS_ENTRY = { invokedFunctionArn: FUNCTION_ARN };

/** The runbook the construct makes for `gate`, as the stand-in reads it. */
export const runbookDocument = (gate: Gate, approvers: string[], notificationArn?: string) =>
  runbookContent({
    gate,
    approvers,
    functionArn: FUNCTION_ARN,
    assumeRoleArn: `arn:aws:iam::${ACCOUNT}:role/sluice-automation`,
    ...(notificationArn !== undefined && { notificationArn }),
  }) as unknown as AutomationDocument;

export interface SsmStandIn {
  readonly ssm: SsmEndpoint;
  readonly endpoint: string;
  /** An SSM client signing as `who`. */
  client(who: TestIdentity): SSMClient;
  close(): Promise<void>;
}

/**
 * Starts the stand-in on a free port. Its invoke step answers with what `invoke` resolves to, or,
 * when it rejects, with the error as Lambda reports an unhandled one.
 */
export async function startSsmStandIn(options: {
  readonly identities: readonly TestIdentity[];
  readonly documents: ReadonlyMap<string, AutomationDocument>;
  readonly invoke: (functionName: string, payload: string) => Promise<unknown>;
}): Promise<SsmStandIn> {
  const { ssm, endpoint } = await listenSsm({
    identities: [...options.identities],
    documents: new Map(options.documents),
    invoke: async (functionName, payload) => {
      // Thrown before it returns (a failed expect), an error is the test's, not the function's.
      const answer = options.invoke(functionName, payload);
      try {
        return { statusCode: 200, payload: JSON.stringify(await answer) };
      } catch (error) {
        return {
          statusCode: 200,
          payload: JSON.stringify({ errorMessage: (error as Error).message }),
          functionError: 'Unhandled',
        };
      }
    },
  });
  return {
    ssm,
    endpoint,
    client: (who) => ssmClient(endpoint, who),
    close: () => new Promise<void>((done) => ssm.server.close(() => done())),
  };
}
