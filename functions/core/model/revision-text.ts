// How a revision is shown to people: its digest first (what is pinned, applied and compared), and
// its tag only as what it is: checked against the registry when sluice resolved it, or claimed
// when a requester wrote it (an approval, an override, a runbook parameter), as approvers must not
// read a claimed tag as verified. No revision at all is "any revision", in words.

/** Where a revision's tag comes from: sluice resolved it from the registry, or a person wrote it. */
export type RevisionTag = 'checked' | 'claimed';

const REVISION = /^(?:(.+)@)?(sha256:[a-f0-9]+)$/;

/**
 * `sha256:<hex> (tag v1)` for a revision sluice resolved; `sha256:<hex> (tag "v1" claimed, not
 * checked against the registry)` for one a person wrote; `sha256:<hex>` without a tag; `any revision`
 * for none. Text that is not a revision is shown quoted, as claimed.
 */
export function revisionText(revision: string | undefined | null, tag: RevisionTag): string {
  if (revision === undefined || revision === null || revision === '') return 'any revision';
  const parsed = REVISION.exec(revision);
  if (!parsed) return `${JSON.stringify(revision)} (claimed, not a digest)`;
  const [, name, digest] = parsed;
  if (name === undefined) return digest!;
  return tag === 'checked'
    ? `${digest} (tag ${name})`
    : `${digest} (tag ${JSON.stringify(name)} claimed, not checked against the registry)`;
}
