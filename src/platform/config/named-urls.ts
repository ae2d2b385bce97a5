// Settings that name outbound endpoints for realms to refer to by name (authorization.policy_engines,
// security.challenge_providers): `name=url[,name=url...]`. A realm's policy holds only the name,
// so where the endpoint lives stays the operator's configuration. Anything malformed throws, so a
// bad setting stops start-up with the setting's name in the message.
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export interface NamedUrl {
  name: string;
  url: string;
}

export function parseNamedUrls(
  setting: string | null,
  settingName: string,
  noun: string,
): Map<string, NamedUrl> {
  const table = new Map<string, NamedUrl>();
  if (setting === null || setting.trim() === '') return table;
  for (const entry of setting.split(',')) {
    const at = entry.indexOf('=');
    const name = entry.slice(0, at).trim();
    const url = entry.slice(at + 1).trim();
    if (at < 1 || !NAME.test(name))
      throw new Error(`${settingName}: "${name}" is not a ${noun} name (letters, digits, _ . -)`);
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      // reported below
    }
    if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:')
      throw new Error(`${settingName}: ${noun} ${name} needs an http(s) URL`);
    if (table.has(name)) throw new Error(`${settingName}: ${noun} ${name} is named twice`);
    table.set(name, { name, url: parsed.href });
  }
  return table;
}
