// `cdk deploy`, locally: a synthesized stack's table created in DynamoDB Local as the template
// describes it, its alarms put in the CloudWatch stand-in (a new alarm has no data), its functions
// run from their packaged bundles, its custom resources created in dependency order by the
// function behind their service token (as CloudFormation and the CDK Provider framework would),
// and its outputs published to the CloudFormation stand-in, where `sluice --stack` reads them.
import { CloudWatchClient, PutMetricAlarmCommand } from '@aws-sdk/client-cloudwatch';
import {
  CreateTableCommand,
  DynamoDBClient,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { randomUUID } from 'node:crypto';
import { writeStandInStack } from '../cloudformation-endpoint.ts';
import { writeEventRules } from '../event-rules.ts';
import { eventBridgeDeliveries } from '../eventbridge-endpoint.ts';
import { componentsEnv, type Components } from '../components.ts';
import type { TestIdentity } from '../sigv4-identity.ts';
import { templateFunctions, type InvocationResult, type LocalFunction } from './functions.ts';
import { LocalLambdaService } from './lambda-service.ts';
import { loadTemplate, ResolvedTemplate } from './template.ts';

export interface LocalDeployOptions {
  /** The cloud assembly folder (`cdk.out`). */
  readonly assemblyDir: string;
  readonly stackName: string;
  readonly account: string;
  readonly components: Components;
  /** Who runs `cdk deploy`: CloudFormation creates the stack's alarms in this identity's account. */
  readonly deployer: TestIdentity;
  /** Whose signatures the stack's Lambda and Scheduler accept. */
  readonly identities: readonly TestIdentity[];
  /** The credentials a function's role gives it, by the role's name. */
  readonly identityOf: (roleName: string) => TestIdentity;
  /** More environment for every function (e.g. the endpoints of stand-ins started beside). */
  readonly extraEnv?: Readonly<Record<string, string>>;
}

/** An event as an AWS service (or PutEvents) gives it: the envelope's fields EventBridge does not fill. */
export interface ServiceEvent {
  readonly source: string;
  readonly 'detail-type': string;
  readonly resources?: readonly string[];
  readonly detail: object;
}

export interface LocalStack {
  readonly template: ResolvedTemplate;
  readonly lambda: LocalLambdaService;
  readonly functions: readonly LocalFunction[];
  /** The value of an output, by its key (e.g. `SluiceTableName`). */
  output(key: string): string;
  /** The environment that points the CLI and the SDK at this stack's services. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Puts events on a bus of the stack or the default bus (as an AWS service does), routed by the
   * stack's rules in the EventBridge stand-in; the functions they target are invoked.
   */
  putEvents(events: readonly ServiceEvent[], busName?: string): Promise<void>;
  /** The messages the stack's rules sent to a topic of the template, by its logical id. */
  topicMessages(topicLogicalId: string): string[];
  /** Fires a schedule of the template (AWS::Scheduler::Schedule) once, as Scheduler would. */
  fireSchedule(logicalId: string): Promise<InvocationResult>;
  stop(): Promise<void>;
}

/** Custom resources and the resources they depend on, in an order CloudFormation could create them. */
function creationOrder(template: ResolvedTemplate): string[] {
  const resources = template.template.Resources;
  const dependencies = (logicalId: string): string[] => {
    const found = new Set<string>();
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object')
        for (const [key, item] of Object.entries(value)) {
          if (key === 'Ref' && typeof item === 'string' && item in resources) found.add(item);
          else if (key === 'Fn::GetAtt' && Array.isArray(item)) found.add(String(item[0]));
          else walk(item);
        }
    };
    walk(resources[logicalId]!.Properties);
    const dependsOn = resources[logicalId]!.DependsOn;
    for (const id of Array.isArray(dependsOn) ? dependsOn : dependsOn ? [dependsOn] : []) found.add(id);
    return [...found];
  };
  const order: string[] = [];
  const visiting = new Set<string>();
  const visit = (logicalId: string) => {
    if (order.includes(logicalId)) return;
    if (visiting.has(logicalId))
      throw new Error(`the template's resources depend on each other in a cycle at ${logicalId}`);
    visiting.add(logicalId);
    dependencies(logicalId).forEach(visit);
    order.push(logicalId);
  };
  Object.keys(resources).forEach(visit);
  return order;
}

async function createTable(
  template: ResolvedTemplate,
  logicalId: string,
  dynamodb: DynamoDBClient,
): Promise<void> {
  const properties = template.resolve(template.resource(logicalId).Properties) as Record<string, unknown>;
  const name = template.ref(logicalId);
  const input: CreateTableCommandInput = {
    TableName: name,
    KeySchema: properties.KeySchema as CreateTableCommandInput['KeySchema'],
    AttributeDefinitions: properties.AttributeDefinitions as CreateTableCommandInput['AttributeDefinitions'],
    GlobalSecondaryIndexes:
      properties.GlobalSecondaryIndexes as CreateTableCommandInput['GlobalSecondaryIndexes'],
    BillingMode: 'PAY_PER_REQUEST',
  };
  await dynamodb.send(new CreateTableCommand(input));
  await waitUntilTableExists({ client: dynamodb, maxWaitTime: 120 }, { TableName: name });
  const ttl = properties.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean } | undefined;
  if (ttl?.Enabled)
    await dynamodb.send(
      new UpdateTimeToLiveCommand({
        TableName: name,
        TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
      }),
    );
}

/** Deploys the stack on the local components; `stop()` stops its Lambda and Scheduler. */
export async function deployLocally(options: LocalDeployOptions): Promise<LocalStack> {
  const { assemblyDir, stackName, account, components } = options;
  const region = components.region;
  const baseEnv = { ...componentsEnv(components), ...options.extraEnv };
  const events = eventBridgeDeliveries(components.eventBridge.deliveriesDir);
  const handedOn = new Map<string, number>();
  // EventBridge invokes a function target asynchronously with the input the rule made.
  const handOnEvents = () => {
    for (const fn of lambda.deployed) {
      const deliveries = events.deliveries(fn.arn);
      for (const delivery of deliveries.slice(handedOn.get(fn.arn) ?? 0)) {
        if (delivery.error !== undefined) throw new Error(`EventBridge stand-in: ${delivery.error}`);
        void lambda.invoke(fn, JSON.parse(delivery.body!), 'Event');
      }
      handedOn.set(fn.arn, deliveries.length);
    }
  };
  const lambda: LocalLambdaService = new LocalLambdaService({
    account,
    region,
    identities: options.identities,
    componentsEnv: baseEnv,
    identityOf: (fn) => options.identityOf(fn.roleName),
    afterEach: handOnEvents,
  });
  await lambda.start();
  // The CLI finds the table and the gate function in the stack's outputs, not in the components'.
  const { SLUICE_TABLE: _table, ...withoutTable } = baseEnv;
  const env: Record<string, string> = {
    ...withoutTable,
    AWS_ENDPOINT_URL_LAMBDA: lambda.endpoint,
    AWS_ENDPOINT_URL_SCHEDULER: lambda.endpoint,
  };
  // The stack's names are unique per deploy here: DynamoDB Local keeps tables between tests.
  const template = new ResolvedTemplate(loadTemplate(assemblyDir, stackName), {
    stackName: `${stackName}-${randomUUID().slice(0, 8)}`,
    account,
    region,
    functionUrlBase: lambda.functionUrlBase,
  });
  try {
    const functions = templateFunctions(template, assemblyDir).map((fn) => ({
      ...fn,
      environment: {
        ...fn.environment,
        AWS_ENDPOINT_URL_LAMBDA: lambda.endpoint,
        AWS_ENDPOINT_URL_SCHEDULER: lambda.endpoint,
      },
    }));
    lambda.deploy(functions);
    writeEventRules(components.eventBridge.rulesDir, template.place.stackName, eventRulesOf(template));
    for (const fn of functions) handedOn.set(fn.arn, events.deliveries(fn.arn).length);
    // CloudFormation's own calls, as the one who deploys.
    const { deployer } = options;
    const credentials = {
      accessKeyId: deployer.accessKeyId,
      secretAccessKey: deployer.secretAccessKey,
      sessionToken: deployer.sessionToken,
    };
    const dynamodb = new DynamoDBClient({ region, endpoint: components.dynamodb.endpoint, credentials });
    const cloudWatch = new CloudWatchClient({
      region,
      endpoint: components.cloudWatch.endpoint,
      credentials,
    });
    for (const logicalId of creationOrder(template)) {
      const { Type } = template.resource(logicalId);
      if (Type === 'AWS::DynamoDB::Table' || Type === 'AWS::DynamoDB::GlobalTable')
        await createTable(template, logicalId, dynamodb);
      else if (Type === 'AWS::CloudWatch::Alarm') {
        const properties = template.resolve(template.resource(logicalId).Properties) as Record<string, never>;
        await cloudWatch.send(
          new PutMetricAlarmCommand({ ...properties, AlarmName: template.ref(logicalId) }),
        );
      } else if (Type.startsWith('Custom::')) await createCustomResource(template, logicalId, lambda);
    }
    const outputs = Object.entries(template.template.Outputs ?? {}).map(([key, output]) => ({
      OutputKey: key,
      OutputValue: template.text(output.Value),
      Description: output.Description,
      ExportName: output.Export ? template.text(output.Export.Name) : undefined,
    }));
    writeStandInStack(components.cloudFormation.stacksDir, stackName, { outputs });
    return {
      template,
      lambda,
      functions,
      env,
      output: (key) => {
        const found = outputs.find((output) => output.OutputKey === key);
        if (!found) throw new Error(`stack ${stackName} has no output '${key}'`);
        return found.OutputValue;
      },
      putEvents: async (entries, busName = 'default') => {
        const client = new EventBridgeClient({
          region,
          endpoint: components.eventBridge.endpoint,
          credentials,
        });
        const answer = await client.send(
          new PutEventsCommand({
            Entries: entries.map((entry) => ({
              EventBusName: busName,
              Source: entry.source,
              DetailType: entry['detail-type'],
              Resources: entry.resources ? [...entry.resources] : undefined,
              Detail: JSON.stringify(entry.detail),
            })),
          }),
        );
        if (answer.FailedEntryCount) throw new Error(`PutEvents failed: ${JSON.stringify(answer.Entries)}`);
        handOnEvents();
      },
      topicMessages: (logicalId) => events.messages(template.ref(logicalId)),
      fireSchedule: async (logicalId) => {
        const { Target } = template.resolve(template.resource(logicalId).Properties) as {
          Target: { Arn: string; Input?: string };
        };
        return lambda.invoke(lambda.byName(Target.Arn), JSON.parse(Target.Input ?? '{}'), 'Schedule');
      },
      stop: () => lambda.stop(),
    };
  } catch (error) {
    await lambda.stop();
    throw error;
  }
}

/**
 * The template's buses and rules with every reference resolved as this deploy names things, for
 * the EventBridge stand-in: its targets are then this deploy's functions and topics.
 */
function eventRulesOf(template: ResolvedTemplate): object {
  const resources = Object.fromEntries([
    ...template
      .ofType('AWS::Events::EventBus')
      .map((id) => [id, { Type: 'AWS::Events::EventBus', Properties: { Name: template.ref(id) } }]),
    ...template
      .ofType('AWS::Events::Rule')
      .map((id) => [
        id,
        { Type: 'AWS::Events::Rule', Properties: template.resolve(template.resource(id).Properties) },
      ]),
  ]);
  return { Resources: resources };
}

/** Creates a custom resource with the function behind its service token (through a CDK Provider's framework). */
async function createCustomResource(
  template: ResolvedTemplate,
  logicalId: string,
  lambda: LocalLambdaService,
): Promise<void> {
  const { Type, Properties = {} } = template.resource(logicalId);
  const properties = template.resolve(Properties) as Record<string, unknown>;
  const token = String(properties.ServiceToken);
  const framework = template.resource(template.functionLogicalId(token)).Properties ?? {};
  const userFunction = (framework.Environment as { Variables?: Record<string, unknown> } | undefined)
    ?.Variables?.USER_ON_EVENT_FUNCTION_ARN;
  const fn = lambda.byName(userFunction ? template.text(userFunction) : token);
  const { place } = template;
  const answer = await lambda.invoke(
    fn,
    {
      RequestType: 'Create',
      ServiceToken: token,
      ResponseURL: 'http://127.0.0.1:9/unused',
      StackId: `arn:aws:cloudformation:${place.region}:${place.account}:stack/${place.stackName}/local`,
      RequestId: randomUUID(),
      LogicalResourceId: logicalId,
      ResourceType: Type,
      ResourceProperties: properties,
    },
    'RequestResponse',
  );
  if ('error' in answer)
    throw new Error(
      `CREATE_FAILED ${logicalId} (${Type}): ${answer.error.errorType}: ${answer.error.errorMessage}`,
    );
}
