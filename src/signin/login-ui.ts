// Where a realm's login UI lives (policy interaction.login_ui_url, else the built-in UI when this
// process serves it): the authorize endpoint sends browsers there, and magic links point there.
import { BUILTIN_LOGIN_UI_PATH } from '../clients/builtin-clients.ts';
import { problem } from '../platform/http/problem.ts';
import { policyValue, type RealmPolicy } from '../realms/index.ts';
import type { SigninDeps } from './signin.deps.ts';

/**
 * The realm's login UI; without one configured, the built-in UI when this process serves it
 * (setting ui.enabled, docs/login-ui.md), so a new realm can sign in at once.
 */
export function loginUiOf(app: SigninDeps, value: unknown): URL {
  const unavailable = () =>
    problem.unavailable('the realm has no usable login UI configured (policy interaction.login_ui_url)');
  if ((value === undefined || value === null || value === '') && app.config.ui.enabled)
    return new URL(`${app.config.server.publicOrigin}${BUILTIN_LOGIN_UI_PATH}`);
  if (typeof value !== 'string' || value === '') throw unavailable();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw unavailable();
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw unavailable();
  return url;
}

/** The login UI URL, or null when none is usable (magic links are then not offered). */
export function configuredLoginUi(app: Pick<SigninDeps, 'config'>, policy: RealmPolicy): URL | null {
  try {
    return loginUiOf(app as SigninDeps, policyValue(policy, 'interaction', 'login_ui_url'));
  } catch {
    return null;
  }
}
