// The metadata checks the API server makes of every custom resource (apimachinery's
// ValidateObjectMeta with NameIsDNSSubdomain), for objects that cannot be dry-run before the first write.

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const TOTAL_ANNOTATIONS_BYTES = 256 * 1024;

const isDnsSubdomain = (text: string) => text.length <= 253 && DNS_SUBDOMAIN.test(text);

/** apimachinery's IsQualifiedName: `[prefix/]name`, the prefix a DNS subdomain, the name at most 63 characters. */
function isQualifiedName(key: string): boolean {
  const parts = key.split('/');
  if (parts.length > 2) return false;
  const name = parts.at(-1)!;
  if (parts.length === 2 && (parts[0] === '' || !isDnsSubdomain(parts[0]!))) return false;
  return name.length <= 63 && QUALIFIED_NAME.test(name);
}

const entries = (value: unknown): [string, unknown][] =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.entries(value) : [];

/** What the API server would refuse in a custom resource's name, labels and annotations, each naming its field. */
export function customResourceMetadataProblems(metadata: unknown): string[] {
  const problems: string[] = [];
  const name = (metadata as { name?: unknown } | undefined)?.name;
  if (typeof name === 'string' && !isDnsSubdomain(name))
    problems.push(
      `metadata.name: Invalid value "${name}": must be a lowercase RFC 1123 subdomain (at most 253 characters of a-z, 0-9, '-' and '.', starting and ending with a letter or digit)`,
    );
  for (const [key, value] of entries((metadata as { labels?: unknown } | undefined)?.labels)) {
    if (!isQualifiedName(key))
      problems.push(`metadata.labels: Invalid key "${key}": must be a qualified name ([prefix/]name)`);
    if (typeof value === 'string' && !(value.length <= 63 && LABEL_VALUE.test(value)))
      problems.push(
        `metadata.labels.${key}: Invalid value "${value}": at most 63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit`,
      );
  }
  let annotationBytes = 0;
  for (const [key, value] of entries((metadata as { annotations?: unknown } | undefined)?.annotations)) {
    if (!isQualifiedName(key.toLowerCase()))
      problems.push(`metadata.annotations: Invalid key "${key}": must be a qualified name ([prefix/]name)`);
    annotationBytes += Buffer.byteLength(key) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
  }
  if (annotationBytes > TOTAL_ANNOTATIONS_BYTES)
    problems.push(`metadata.annotations: Too long: must have at most ${TOTAL_ANNOTATIONS_BYTES} bytes`);
  return problems;
}
