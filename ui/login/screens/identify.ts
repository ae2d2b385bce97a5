// identify {identifier}: who is signing in (identifier first; the password comes next).
import { field } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { stepForm } from './form.js';
import { rememberIdentifier } from './password.js';
import type { Screen } from './screen.js';

export const identifyScreen: Screen = {
  type: 'identify',
  title: 'identify.title',
  alternative: 'alt.identify',
  render(ctx) {
    const id = field(t('identify.identifier'), {
      name: 'identifier',
      type: 'text',
      autocomplete: 'username',
      required: true,
      autocapitalize: 'none',
      spellcheck: 'false',
    });
    return stepForm(t('identify.submit'), [id.wrap], () => {
      rememberIdentifier(id.input.value.trim());
      return ctx.step('identify', { identifier: id.input.value.trim() });
    });
  },
};
