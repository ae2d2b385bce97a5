// hotp {code}: the code an HOTP token shows (press its button for a new one).
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { codeField } from './code-input.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

export const hotpScreen: Screen = {
  type: 'hotp',
  title: 'hotp.title',
  alternative: 'alt.hotp',
  render(ctx) {
    const code = codeField(t('hotp.code'), 'code', true);
    return stepForm(t('hotp.submit'), [h('p', {}, t('hotp.help')), code.wrap], () =>
      ctx.step('hotp', { code: code.input.value.replace(/\s/g, '') }, { failed: 'hotp.failed' }),
    );
  },
};
