// certificate {} (docs/certificate-signin.md; spec doc 1, endpoint table and evaluation order 2
// and 5): the client certificate of the request (mutual-TLS listener or trusted proxy) signs the
// account it names in. The certificate must chain to one of the realm's trust anchors, be valid
// now and allow TLS client authentication, and the anchor's mapping field must name exactly one
// account by a sign-in identifier. A refusal is a failed proof like a wrong password: it spends the
// failure budget and is audited with its reason. A certificate from a multi-factor anchor is the
// second factor as well (transaction.ts isSecondFactor).
import { type CertificateRefusal, checkCertificate, listTrustAnchors } from '../../mfa/index.ts';
import { object } from '../../platform/http/decode.ts';
import { problem } from '../../platform/http/problem.ts';
import { findUserByVerifiedIdentifier } from '../../users/index.ts';
import { withFactor } from '../transitions.ts';
import { proofFailed } from './proof-failed.ts';
import type { Step } from './step.ts';

type Refusal = CertificateRefusal | 'no_matching_account' | 'other_account';

export const certificateStep: Step<Record<string, never>> = {
  path: 'certificate',
  spendsBudgets: true,
  action: 'certificate',
  decode: object({}),
  async run(q, t, _body, ctx) {
    // Offered only to a request with a certificate (facts.ts); the check keeps it so.
    const presented = ctx.clientCertificate;
    if (!presented) throw problem.conflict('this request presents no client certificate');
    const refused = (reason: Refusal) => proofFailed(q, t, ctx, 'x509', reason);
    const anchors = await listTrustAnchors(q, t.realmId);
    const verdict = await checkCertificate(presented.x509.raw, anchors, ctx.now);
    if (!verdict.ok) return refused(verdict.refusal);
    const { type, value } = verdict.identifier;
    const user = await findUserByVerifiedIdentifier(q, t.realmId, type, value);
    if (!user) return refused('no_matching_account');
    // An account already identified in this transaction must be the certificate's own.
    if ((t.userId ?? t.identifier) !== null && user.id !== t.userId) return refused('other_account');
    return {
      tx: {
        ...withFactor({ ...t, userId: user.id }, 'x509'),
        certificateMultiFactor: verdict.anchor.multi_factor,
      },
    };
  },
};
