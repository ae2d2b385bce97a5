// enroll_totp: totp/enroll {} gives a new secret (shown as a QR code and as text), then
// totp/activate {code} proves the app has it. The recovery codes the activation answers are shown
// by the controller (../recovery-codes.ts) before anything else.
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { qrSvg } from '../../lib/qr.js';
import { codeField } from './code-input.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

/**
 * ABCD EFGH ...: easier to type into an app by hand. Each group is a span the stylesheet keeps on
 * one line, so a narrow screen wraps between groups and never inside one.
 */
export function grouped(secret: string): HTMLElement {
  const groups = secret.match(/.{1,4}/g) ?? [];
  const code = h('code', {});
  groups.forEach((g, i) => {
    if (i > 0) code.append(' ');
    code.append(h('span', {}, g));
  });
  return code;
}

export const enrollTotpScreen: Screen = {
  type: 'enroll_totp',
  title: 'enroll.title',
  render(ctx) {
    const totp = ctx.totp;
    if (!totp) {
      return stepForm(t('enroll.start'), [h('p', {}, t('enroll.intro'))], () => ctx.step('totp/enroll'));
    }
    const code = codeField(t('enroll.code'), 'code', true);
    return stepForm(
      t('enroll.submit'),
      [
        h('p', {}, t('enroll.help')),
        h('div', { class: 'qr-box' }, qrSvg(totp.otpauth_uri, t('enroll.qr_label'))),
        h('p', { class: 'small' }, t('enroll.manual')),
        h('p', { class: 'secret', 'data-secret': totp.secret }, grouped(totp.secret)),
        code.wrap,
      ],
      () =>
        ctx.step('totp/activate', { code: code.input.value.replace(/\s/g, '') }, { failed: 'enroll.failed' }),
    );
  },
};
