// register: the new account's email address, password and name (registration step).
import { field, passwordField } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

const MIN_LENGTH = 8; // the server's minimum (users/password-rules.ts); it checks again

export const registerScreen: Screen = {
  type: 'register',
  title: 'register.title',
  render(ctx) {
    const email = field(t('register.email'), {
      name: 'email',
      type: 'email',
      autocomplete: 'email',
      required: true,
    });
    const name = field(t('register.name'), { name: 'display_name', type: 'text', autocomplete: 'name' });
    const pw = passwordField(t('register.password'), t('password.rule'), {
      name: 'password',
      autocomplete: 'new-password',
      minlength: String(MIN_LENGTH),
      required: true,
    });
    return stepForm(t('register.submit'), [email.wrap, name.wrap, pw.wrap], () => {
      const body: Record<string, unknown> = { email: email.input.value.trim(), password: pw.input.value };
      const displayName = name.input.value.trim();
      if (displayName) body.display_name = displayName;
      return ctx.step('registration', body);
    });
  },
};
