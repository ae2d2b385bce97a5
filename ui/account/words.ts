// Sessions in words: the device a user agent names ("Chrome on Linux") and the sign-in methods an
// amr list names ("Password", "Security key"). The user agent is parsed by a few ordered rules of
// our own (docs/decisions.md): the page needs a browser family and an operating system, nothing
// more, and a parser library would be larger than the page.
import { type MessageKey, t } from '../lib/i18n.js';

// Order matters: Edge and Opera say "Chrome" too, Chrome says "Safari", Android says "Linux".
const BROWSERS: [RegExp, string][] = [
  [/\bEdgA?\//, 'Edge'],
  [/\bOPR\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bHeadlessChrome\//, 'Headless Chrome'],
  [/\bChrom(e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bSafari\//, 'Safari'],
];
const SYSTEMS: [RegExp, string][] = [
  [/\bAndroid\b/, 'Android'],
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

const first = (rules: [RegExp, string][], ua: string) => rules.find(([re]) => re.test(ua))?.[1] ?? null;

/** "Chrome on Linux", "Firefox", "Android device", or "Unknown device" when nothing is known. */
export function deviceName(ua: string | null): string {
  if (!ua) return t('acct.device_unknown');
  const browser = first(BROWSERS, ua);
  const system = first(SYSTEMS, ua);
  if (browser && system) return t('acct.device_on', { browser, system });
  if (browser) return browser;
  if (system) return t('acct.device_system', { system });
  // Not a browser (a command line tool, an app's HTTP library): its product token, shortened.
  const product = /^[A-Za-z][\w.-]{0,30}/.exec(ua)?.[0];
  return product ?? t('acct.device_unknown');
}

// RFC 8176 values and this service's own factor names (docs/signin.md), each with its words.
const FACTORS: Record<string, MessageKey> = {
  pwd: 'amr.pwd',
  otp: 'amr.otp',
  sms: 'amr.sms',
  tel: 'amr.sms',
  magic_link: 'amr.magic_link',
  totp: 'amr.totp',
  hotp: 'amr.hotp',
  recovery: 'amr.recovery',
  hwk: 'amr.hwk',
  swk: 'amr.swk',
  x509: 'amr.x509',
  sc: 'amr.x509',
  fed: 'amr.fed',
  fed_mfa: 'amr.fed_mfa',
  anon: 'amr.anon',
  mfa: 'amr.mfa',
  mca: 'amr.mfa',
  user: 'amr.user',
  pin: 'amr.pin',
  fpt: 'amr.bio',
  face: 'amr.bio',
  iris: 'amr.bio',
  retina: 'amr.bio',
  vbm: 'amr.bio',
};

/** The amr list in words, each named once ("Password, Authenticator app"). */
export function factorWords(amr: string[]): string {
  const words = amr.map((a) => {
    const key = FACTORS[a];
    return key ? t(key) : a;
  });
  return [...new Set(words)].join(', ');
}
