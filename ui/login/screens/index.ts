// The registry of login screens by next-action type. A new factor (email code, magic link, HOTP,
// passkey) is one screen file and one line here (docs/login-ui.md, "Adding a screen").
import { accountScreen } from './account.js';
import { cancelDeletionScreen, profileScreen, termsScreen } from './account-duties.js';
import { challengeScreen } from './challenge.js';
import { consentScreen } from './consent.js';
import { enrollPasskeyScreen } from './enroll-passkey.js';
import { enrollTotpScreen } from './enroll-totp.js';
import { externalRedirectScreen } from './federation.js';
import { hotpScreen } from './hotp.js';
import { identifyScreen } from './identify.js';
import { linkAccountScreen } from './link-account.js';
import { magicLinkScreen } from './magic-link.js';
import { emailOtpScreen, smsOtpScreen, verifyContactScreen, verifyEmailScreen } from './one-time-code.js';
import { organizationScreen } from './organization.js';
import { passkeyScreen } from './passkey.js';
import { passwordScreen } from './password.js';
import { recoveryCodeScreen } from './recovery-code.js';
import { registerScreen } from './register.js';
import { rememberDeviceScreen } from './remember-device.js';
import type { Screen } from './screen.js';
import { totpScreen } from './totp.js';
import { updatePasswordScreen } from './update-password.js';

export const SCREENS: ReadonlyMap<string, Screen> = new Map(
  [
    accountScreen,
    identifyScreen,
    passwordScreen,
    emailOtpScreen,
    smsOtpScreen,
    magicLinkScreen,
    registerScreen,
    verifyEmailScreen,
    verifyContactScreen,
    termsScreen,
    profileScreen,
    cancelDeletionScreen,
    totpScreen,
    recoveryCodeScreen,
    enrollTotpScreen,
    updatePasswordScreen,
    organizationScreen,
    consentScreen,
    hotpScreen,
    rememberDeviceScreen,
    challengeScreen,
    passkeyScreen,
    enrollPasskeyScreen,
    externalRedirectScreen,
    linkAccountScreen,
  ].map((s) => [s.type, s]),
);
