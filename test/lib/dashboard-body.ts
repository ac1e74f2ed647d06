// The synthesized dashboard's body, read back from the template.
import type { Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';

/** The dashboard's body with the template's references written as `{Ref:…}` / `{GetAtt:…}`. */
export function dashboardBody(template: Template): string {
  const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  expect(dashboards).toHaveLength(1);
  const body = (dashboards[0]!.Properties as { DashboardBody: unknown }).DashboardBody as {
    'Fn::Join': [string, unknown[]];
  };
  return body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join('');
}

export const widgetTitles = (body: string) =>
  (
    JSON.parse(body.replace(/\{"(Ref|Fn::GetAtt)":[^}]*\}/g, 'X')) as {
      widgets: { properties: { title?: string } }[];
    }
  ).widgets
    .map((w) => w.properties.title)
    .filter((title): title is string => title !== undefined);
