// The attributes of the sign-in cookies (spec doc 1, Authentication 1 and 3; docs/signin.md,
// "Login UI on another origin"). One place, so setting and clearing always agree (a cookie is
// only cleared by a Set-Cookie with its own path and attributes).
//
// SameSite, per cookie and why:
// - pa_tx (Strict): set on the authorization endpoint's redirect, a top-level navigation the
//   browser stores it from whatever site started it; afterwards it only travels on the login
//   UI's fetch calls to the transaction API, which are same-site when the login UI shares the
//   server's site. No cross-site request ever needs it.
// - pa_sid (Lax): it must reach the authorization endpoint on the top-level GET navigation a
//   relying party on any site starts (single sign-on), which Strict would cut.
// - pa_rd (Lax): read by the transaction API only, like pa_tx, but kept Lax as the house rule
//   for the long-lived cookies.
// - pa_fed (Lax): set by federation/start in browser mode and read only by the upstream's
//   callback, which arrives as a top-level GET navigation from the upstream's site (Strict would
//   cut it). It binds the callback to the browser that left (docs/federation.md).
// No Domain attribute: each cookie stays on the server's host. Secure whenever the public origin
// is https; not over plain http, where browsers differ on Secure cookies (even on localhost).
import type { CookieSerializeOptions } from '@fastify/cookie';
import { federationPath } from './federation-urls.ts';

export const TX_COOKIE = 'pa_tx';
export const SESSION_COOKIE = 'pa_sid';
export const REMEMBERED_DEVICE_COOKIE = 'pa_rd';
export const FEDERATION_COOKIE = 'pa_fed';

const isSecure = (publicOrigin: string) => publicOrigin.startsWith('https:');

/** The pa_tx cookie is scoped to its own transaction's path (document 1, Authentication 1). */
export const txCookiePath = (realm: string, id: string) => `/api/v1/realms/${realm}/auth/transactions/${id}`;

export const txCookie = (publicOrigin: string, realm: string, id: string): CookieSerializeOptions => ({
  path: txCookiePath(realm, id),
  httpOnly: true,
  secure: isSecure(publicOrigin),
  sameSite: 'strict',
});

export const sessionCookie = (publicOrigin: string, realm: string): CookieSerializeOptions => ({
  path: `/realms/${realm}/`,
  httpOnly: true,
  secure: isSecure(publicOrigin),
  sameSite: 'lax',
});

export const rememberedDeviceCookie = (publicOrigin: string, realm: string): CookieSerializeOptions => ({
  path: `/api/v1/realms/${realm}/auth/`,
  httpOnly: true,
  secure: isSecure(publicOrigin),
  sameSite: 'lax',
});

export const federationCookie = (publicOrigin: string, realm: string): CookieSerializeOptions => ({
  path: federationPath(realm),
  httpOnly: true,
  secure: isSecure(publicOrigin),
  sameSite: 'lax',
});
