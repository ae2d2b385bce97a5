// Every step by its path under /auth/transactions/{id}/.
import { accountStep } from './account.ts';
import { cancelDeletionStep, profileStep, termsStep } from './account-duties.ts';
import { certificateStep } from './certificate.ts';
import { challengeSendStep, challengeStep } from './challenge.ts';
import { consentStep } from './consent.ts';
import { federationStartStep } from './federation-start.ts';
import { guestStep } from './guest.ts';
import { hotpStep } from './hotp.ts';
import { identifyStep } from './identify.ts';
import { organizationStep } from './organization.ts';
import { magicLinkStep, otpSendStep, otpVerifyStep, passwordResetStep } from './otp.ts';
import { passwordStep } from './password.ts';
import { recoveryCodeStep } from './recovery-code.ts';
import { registrationStep } from './registration.ts';
import { rememberDeviceStep } from './remember-device.ts';
import { cancelStep, rememberMeStep, resumeStep, transientStep } from './session-options.ts';
import type { AnyStep } from './step.ts';
import { totpStep } from './totp.ts';
import { totpActivateStep, totpEnrollStep } from './totp-enrollment.ts';
import { updatePasswordStep } from './update-password.ts';
import { webauthnOptionsStep, webauthnVerifyStep } from './webauthn.ts';
import { webauthnRegisterStep, webauthnRegistrationOptionsStep } from './webauthn-enrollment.ts';

export const STEPS: readonly AnyStep[] = [
  accountStep,
  identifyStep,
  passwordStep,
  otpSendStep,
  passwordResetStep,
  otpVerifyStep,
  magicLinkStep,
  totpStep,
  hotpStep,
  certificateStep,
  recoveryCodeStep,
  totpEnrollStep,
  totpActivateStep,
  webauthnOptionsStep,
  webauthnVerifyStep,
  webauthnRegistrationOptionsStep,
  webauthnRegisterStep,
  updatePasswordStep,
  termsStep,
  profileStep,
  cancelDeletionStep,
  registrationStep,
  guestStep,
  organizationStep,
  consentStep,
  cancelStep,
  resumeStep,
  rememberMeStep,
  rememberDeviceStep,
  challengeStep,
  challengeSendStep,
  transientStep,
  federationStartStep,
];
