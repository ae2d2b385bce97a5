// The one-time-code input shared by the TOTP, recovery-code and enrollment screens.
import { field } from '../../lib/dom.js';

export const codeField = (label: string, name: string, digits: boolean) =>
  field(label, {
    name,
    type: 'text',
    autocomplete: 'one-time-code',
    inputmode: digits ? 'numeric' : 'text',
    pattern: digits ? '[0-9 ]*' : undefined,
    required: true,
    autocapitalize: 'none',
    spellcheck: 'false',
  });
