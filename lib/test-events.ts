import { Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as eventschemas from 'aws-cdk-lib/aws-eventschemas';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { formatDuration, type Gate } from '../functions/core/config/index.ts';

/** The EventBridge schema registry where the Lambda console keeps shareable test events. */
export const TEST_EVENT_REGISTRY = 'lambda-testevent-schemas';

/** `create`: the stack creates the registry (kept on delete); `existing`: it is there already; `none`: no test events. */
export type ConsoleTestEvents = 'create' | 'existing' | 'none';

/**
 * The gate function's shareable test events, as the Lambda console reads them: an OpenAPI 3
 * schema named `_<function name>-schema` whose `components.examples` are the events, here a
 * status, an open and a close request per gate. They are claims: the function records them as
 * unverified, and a gate with `requireVerified` refuses them.
 */
export function gateTestEventSchema(gates: readonly Gate[]): Record<string, unknown> {
  const examples: Record<string, { value: Record<string, string> }> = {};
  for (const gate of gates) {
    const window = formatDuration(gate.windowMs ?? 3_600_000);
    examples[`${gate.name}-status`] = { value: { gate: gate.name, action: 'status' } };
    examples[`${gate.name}-open`] = {
      value: {
        gate: gate.name,
        action: 'open',
        window,
        reason: 'CHG-1234',
        requestedBy: 'your-name',
        ...(gate.approval === 'revision' && { revision: '<tag>@sha256:<64 hex, as sluice status shows it>' }),
      },
    };
    examples[`${gate.name}-close`] = {
      value: { gate: gate.name, action: 'close', window, reason: 'incident', requestedBy: 'your-name' },
    };
  }
  return {
    openapi: '3.0.0',
    info: { version: '1.0.0', title: 'Event' },
    paths: {},
    components: {
      schemas: {
        Event: {
          type: 'object',
          required: ['gate', 'action'],
          properties: Object.fromEntries(
            ['gate', 'action', 'window', 'reason', 'revision', 'requestedBy'].map((field) => [
              field,
              { type: 'string' },
            ]),
          ),
        },
      },
      examples,
    },
  };
}

export interface GateTestEventsProps {
  readonly gates: readonly Gate[];
  readonly gateFunction: lambda.IFunction;
  readonly registry: Exclude<ConsoleTestEvents, 'none'>;
}

/** The gate function's shareable console test events (and, with `create`, their registry). */
export class GateTestEvents extends Construct {
  readonly schema: eventschemas.CfnSchema;

  constructor(scope: Construct, id: string, props: GateTestEventsProps) {
    super(scope, id);
    let registry: eventschemas.CfnRegistry | undefined;
    if (props.registry === 'create') {
      registry = new eventschemas.CfnRegistry(this, 'Registry', {
        registryName: TEST_EVENT_REGISTRY,
        description: 'Lambda shareable test events',
      });
      // Other functions' shareable test events live in it too.
      registry.applyRemovalPolicy(RemovalPolicy.RETAIN);
    }
    this.schema = new eventschemas.CfnSchema(this, 'Schema', {
      registryName: TEST_EVENT_REGISTRY,
      schemaName: Fn.join('', ['_', props.gateFunction.functionName, '-schema']),
      type: 'OpenApi3',
      description: 'sluice: gate requests to try in the Lambda console (recorded as unverified claims)',
      content: Stack.of(this).toJsonString(gateTestEventSchema(props.gates)),
    });
    if (registry) this.schema.node.addDependency(registry);
  }
}
