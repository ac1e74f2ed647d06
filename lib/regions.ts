import { Token } from 'aws-cdk-lib';

/**
 * The AWS Regions where Lambda function URLs are not offered, as AWS lists them in "Creating and
 * managing Lambda function URLs" (https://docs.aws.amazon.com/lambda/latest/dg/urls-configuration.html),
 * as of this release: ap-south-2 (Hyderabad), ap-southeast-4 (Melbourne), ap-southeast-5 (Malaysia),
 * ap-southeast-6 (New Zealand), ap-southeast-7 (Thailand), ap-east-2 (Taipei), ca-west-1 (Calgary),
 * eu-south-2 (Spain), eu-central-2 (Zurich), il-central-1 (Tel Aviv), me-central-1 (UAE). A
 * Region AWS adds URLs to (or a new Region without them) changes this list in a release.
 */
export const REGIONS_WITHOUT_FUNCTION_URLS: readonly string[] = [
  'ap-south-2',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ap-east-2',
  'ca-west-1',
  'eu-south-2',
  'eu-central-2',
  'il-central-1',
  'me-central-1',
];

/**
 * Fails synthesis when the stack's Region has no function URLs and there are gates: each gate's
 * signed entries (`open_<gate>`, `close_<gate>`) are function URLs, and CloudFormation would fail
 * the deploy on the first. An environment-agnostic stack is not checked (its Region is a token).
 */
export function checkFunctionUrlRegion(region: string, gates: readonly { name: string }[]): void {
  if (Token.isUnresolved(region) || gates.length === 0 || !REGIONS_WITHOUT_FUNCTION_URLS.includes(region))
    return;
  throw new Error(
    `Sluice: gates ${gates.map((g) => g.name).join(', ')} need Lambda function URLs (their signed entries open_<gate> and close_<gate>), which AWS does not offer in ${region} (nor in ${REGIONS_WITHOUT_FUNCTION_URLS.filter((r) => r !== region).join(', ')}). Deploy the stack in another Region (deliveries may apply to clusters in any Region), or define no gates.`,
  );
}
