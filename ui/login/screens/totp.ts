// totp {code}: the enrolled authenticator's current code.
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { codeField } from './code-input.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

export const totpScreen: Screen = {
  type: 'totp',
  title: 'totp.title',
  alternative: 'alt.totp',
  render(ctx) {
    const code = codeField(t('totp.code'), 'code', true);
    return stepForm(t('totp.submit'), [h('p', {}, t('totp.help')), code.wrap], () =>
      ctx.step('totp', { code: code.input.value.replace(/\s/g, '') }, { failed: 'totp.failed' }),
    );
  },
};
