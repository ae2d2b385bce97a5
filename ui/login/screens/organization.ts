// select_organization {organization_id}: one of the offered organizations.
import { h, newId } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

interface Choice {
  id: string;
  slug: string;
  display_name: string | null;
}

export const organizationScreen: Screen = {
  type: 'select_organization',
  title: 'organization.title',
  render(ctx) {
    const choices = (ctx.action.options?.organizations ?? []) as Choice[];
    const radios = choices.map((o, i) => {
      const id = newId('org');
      const input = h('input', {
        type: 'radio',
        name: 'organization',
        id,
        value: o.id,
        required: true,
        checked: i === 0,
      });
      return {
        input,
        wrap: h('div', { class: 'check' }, input, h('label', { for: id }, o.display_name ?? o.slug)),
      };
    });
    const group = h('fieldset', {}, h('legend', {}, t('organization.help')), ...radios.map((r) => r.wrap));
    return stepForm(t('organization.submit'), [group], async () => {
      const chosen = radios.find((r) => r.input.checked);
      if (chosen) await ctx.step('organization', { organization_id: chosen.input.value });
    });
  },
};
