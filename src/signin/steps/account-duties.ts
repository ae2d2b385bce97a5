// Required actions the account answers itself (spec doc 1, evaluation order 6 and 5):
// terms {version} records the acceptance (kept), profile {fields} fills the required
// user-editable attributes, cancel-deletion {} returns a pending_deletion account to active.
import { NO_NUL } from '../../kernel/text.ts';
import { object, record, string } from '../../platform/http/decode.ts';
import { type FieldError, problem } from '../../platform/http/problem.ts';
import { cancelDeletion, mergeUserAttributes } from '../../users/index.ts';
import { acceptTerms } from '../registration.repo.ts';
import { profileAttributes } from '../registration-policy.ts';
import { type Step, stepActor, stepRecorder } from './step.ts';

export const termsStep: Step<{ version: string }> = {
  path: 'terms',
  spendsBudgets: false,
  action: 'accept_terms',
  decode: object({ version: string({ minLength: 1, maxLength: 128, pattern: NO_NUL }) }),
  async run(q, t, body, ctx) {
    const userId = t.userId as string; // offered only after primary authentication
    if (body.version !== ctx.facts.terms.version)
      throw problem.validation(
        [{ field: 'version', code: 'not_current' }],
        'accept the current terms version',
      );
    await acceptTerms(q, t.realmId, userId, body.version, ctx.now);
    await stepRecorder(q, t.realmId, ctx, stepActor(userId)).audit('user.terms_accepted', {
      category: 'identity',
      subject: { type: 'user', id: userId },
      data: { version: body.version },
    });
    return { tx: t };
  },
};

export const profileStep: Step<{ fields: Record<string, string> }> = {
  path: 'profile',
  spendsBudgets: false,
  action: 'complete_profile',
  decode: object({ fields: record(string({ maxBytes: 1024, pattern: NO_NUL }), { maxEntries: 50 }) }),
  async run(q, t, body, ctx) {
    const userId = t.userId as string;
    const editable = new Set(
      profileAttributes(ctx.policy)
        .filter((a) => a.userEditable)
        .map((a) => a.name),
    );
    const errors: FieldError[] = [];
    for (const name of Object.keys(body.fields))
      if (!editable.has(name)) errors.push({ field: `fields.${name}`, code: 'not_editable' });
    for (const name of ctx.facts.profile.missing)
      if (!body.fields[name]) errors.push({ field: `fields.${name}`, code: 'required' });
    if (errors.length > 0) throw problem.validation(errors);
    await mergeUserAttributes(q, t.realmId, userId, body.fields, ctx.now);
    await stepRecorder(q, t.realmId, ctx, stepActor(userId)).audit('user.profile_completed', {
      category: 'identity',
      subject: { type: 'user', id: userId },
      data: { fields: Object.keys(body.fields) },
    });
    return { tx: t };
  },
};

export const cancelDeletionStep: Step<Record<string, never>> = {
  path: 'cancel-deletion',
  spendsBudgets: false,
  action: 'cancel_deletion',
  decode: object({}),
  async run(q, t, _body, ctx) {
    const userId = t.userId as string;
    await cancelDeletion(q, t.realmId, userId, ctx.now);
    // No webhook event of its own (spec doc 2, Events: deletion request and cancel).
    await stepRecorder(q, t.realmId, ctx, stepActor(userId)).audit('user.deletion_cancelled', {
      category: 'identity',
      subject: { type: 'user', id: userId },
      data: { state: 'active', transaction_id: t.id },
    });
    return { tx: t };
  },
};
