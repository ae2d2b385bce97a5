// The factors context's public surface: TOTP secrets and recovery codes.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export {
  advanceHotp,
  deleteEnrollment,
  deleteHotp,
  deleteTotp,
  type EnrolledFactors,
  type EnrollmentKind,
  enrolledFactors,
  enrollmentSeedContext,
  hotpSeedContext,
  insertEnrollment,
  lockEnrollment,
  lockHotp,
  recordResyncAttempt,
  storeHotp,
} from './factors.repo.ts';
export {
  consumeRecoveryCode,
  lockTotp,
  recordTotpStep,
  replaceRecoveryCodes,
  storeTotp,
  totpSeedContext,
} from './mfa.repo.ts';
export {
  findRememberedDevice,
  forgetRememberedDevices,
  insertRememberedDevice,
  touchRememberedDevice,
} from './remembered-devices.repo.ts';
