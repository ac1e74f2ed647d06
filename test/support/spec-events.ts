// Custom resource events as the CDK Provider framework hands them to the spec function.
import type { SpecResourceEvent } from '../../functions/core/spec-resource/resource.ts';
import type { SpecResourceKind } from '../../functions/core/store/spec-owners.ts';
import { uniqueName } from './testbed.ts';

/** A maker of events for the spec resources of one kind (a fresh request id each). */
export const specEvents =
  (kind: SpecResourceKind) =>
  (
    type: SpecResourceEvent['RequestType'],
    spec: { name: string } & Record<string, unknown>,
    physicalId?: string,
  ): SpecResourceEvent => ({
    RequestType: type,
    RequestId: uniqueName('request'),
    ...(physicalId !== undefined && { PhysicalResourceId: physicalId }),
    ResourceProperties: { Kind: kind, Name: spec.name, Spec: JSON.stringify(spec) },
  });
