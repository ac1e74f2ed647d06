// `source.verify.keyless`: who a keyless cosign signature's Fulcio certificate must name, as
// Flux's `matchOIDCIdentity` (issuer and subject) and cosign's --certificate-oidc-issuer[-regexp]
// and --certificate-identity[-regexp]. A pattern is Go's RE2 and matches the WHOLE value
// (`^(?:pattern)$`): cosign and Flux match anywhere, which lets `github.com/org/` match a subject
// on another host; a pattern written for them with ^ and $ means the same here.
import { identityPatternProblem } from '../oci/keyless-rules.ts';
import { isRecord } from './issues.ts';
import { checked, strict } from './fields.ts';

export const keylessSchema = strict({
  issuer: checked().optional(),
  issuerRegExp: checked(identityPatternProblem).optional(),
  subject: checked().optional(),
  subjectRegExp: checked(identityPatternProblem).optional(),
}).superRefine(
  (keyless, ctx) => {
    for (const field of ['issuer', 'subject'] as const) {
      const set = [field, `${field}RegExp` as const].filter((key) => keyless[key] !== undefined);
      if (set.length !== 1)
        ctx.addIssue({
          code: 'custom',
          message:
            set.length === 0
              ? `name the ${field}: ${field} (exact) or ${field}RegExp (a Go regular expression matching the whole ${field}); without it any ${field} would be trusted`
              : `set ${field} or ${field}RegExp, not both`,
        });
    }
  },
  { when: (payload) => isRecord(payload.value) },
);
