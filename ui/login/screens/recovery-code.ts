// recovery-code {code}: one of the saved single-use codes in place of the authenticator.
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { codeField } from './code-input.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

export const recoveryCodeScreen: Screen = {
  type: 'recovery_code',
  title: 'recovery.title',
  alternative: 'alt.recovery_code',
  render(ctx) {
    const code = codeField(t('recovery.code'), 'code', false);
    return stepForm(t('recovery.submit'), [h('p', {}, t('recovery.help')), code.wrap], () =>
      ctx.step('recovery-code', { code: code.input.value.trim() }, { failed: 'recovery.failed' }),
    );
  },
};
