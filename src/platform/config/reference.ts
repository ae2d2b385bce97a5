// The generated settings reference (docs/configuration-reference.md).
import { renderSettingsMarkdown } from './settings.ts';

export function configReferenceMarkdown(): string {
  return [
    '# Configuration reference',
    '',
    'Generated from `src/platform/config/settings.ts` by `node --import tsx scripts/config-doc.ts`;',
    'do not edit by hand. How settings are given (file, environment, precedence) is in',
    '[configuration.md](configuration.md).',
    '',
    renderSettingsMarkdown().trimEnd(),
    '',
  ].join('\n');
}
