// The realm's brand on the built-in pages (docs/login-ui.md, "Branding"): GET /branding gives the
// name, colour, support contact and logo URL. The colour goes into the --accent custom property
// through the CSSOM (no style attribute or element, so the page's style-src 'self' holds); text
// always goes in as text. A realm without a brand, or a failed read, leaves the pages as they are.
import { h } from './dom.js';
import { t } from './i18n.js';

export interface Brand {
  display_name: string;
  primary_color: string | null;
  support_contact: string | null;
  logo_url: string | null;
}

const COLOUR = /^#[0-9a-fA-F]{6}$/;

export async function loadBrand(apiBase: string, realm: string): Promise<Brand | null> {
  try {
    const res = await fetch(`${apiBase}/api/v1/realms/${encodeURIComponent(realm)}/branding`, {
      headers: { accept: 'application/json' },
    });
    return res.ok ? ((await res.json()) as Brand) : null;
  } catch {
    return null;
  }
}

/** White or near-black text on the colour, whichever reads better (WCAG relative luminance). */
function textOn(colour: string): string {
  const channel = (i: number) => {
    const c = Number.parseInt(colour.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  return luminance > 0.179 ? '#0d1117' : '#ffffff';
}

/** Sets the realm's colour as the pages' accent. */
export function applyColour(brand: Brand | null): void {
  const colour = brand?.primary_color;
  if (!colour || !COLOUR.test(colour)) return;
  const root = document.documentElement.style;
  root.setProperty('--accent', colour);
  root.setProperty('--accent-text', textOn(colour));
}

/** The header above each screen: the logo (when uploaded) and the realm's name. */
export function brandHeader(apiBase: string, brand: Brand | null): HTMLElement | null {
  if (!brand) return null;
  const logo = brand.logo_url?.startsWith('/')
    ? h('img', { class: 'brand-logo', src: `${apiBase}${brand.logo_url}`, alt: '' })
    : null;
  return h('div', { class: 'brand' }, logo, h('span', { class: 'brand-name' }, brand.display_name));
}

/** The realm's support contact as a link under each screen: mailto for an address, else the URL. */
export function supportLink(brand: Brand | null): HTMLElement | null {
  const contact = brand?.support_contact;
  if (!contact) return null;
  const href = contact.startsWith('https://') ? contact : contact.includes('@') ? `mailto:${contact}` : null;
  if (!href) return null;
  return h('p', { class: 'support small' }, `${t('brand.help')} `, h('a', { href }, t('brand.contact')));
}
