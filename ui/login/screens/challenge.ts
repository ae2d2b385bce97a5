// challenge {provider_response}: the realm's authentication-flow rules ask for a check. A
// provider's widget cannot run under this page's Content-Security-Policy, so the reference UI
// takes the provider's response token as text (a hosted UI embeds the widget instead).
import { field, h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

export const challengeScreen: Screen = {
  type: 'challenge',
  title: 'challenge.title',
  render(ctx) {
    const response = field(t('challenge.response'), {
      name: 'provider_response',
      type: 'text',
      required: true,
      autocapitalize: 'none',
      spellcheck: 'false',
    });
    return stepForm(t('challenge.submit'), [h('p', {}, t('challenge.help')), response.wrap], () =>
      ctx.step(
        'challenge',
        { provider_response: response.input.value.trim() },
        { failed: 'challenge.failed' },
      ),
    );
  },
};
