// The factors context's public surface: TOTP secrets and recovery codes.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export { decodeBase32 } from './base32.ts';
export {
  type CertificateRefusal,
  type CertificateVerdict,
  checkCertificate,
} from './certificates/certificate-check.ts';
export { hasTrustAnchors, listTrustAnchors, type TrustAnchorRow } from './certificates/trust-anchors.repo.ts';
export { type FactorChange, noticeFactorChanged, requestLocale } from './factor-notice.ts';
export {
  advanceHotp,
  deleteEnrollment,
  deleteHotp,
  type EnrolledFactors,
  type EnrollmentKind,
  enrolledFactors,
  enrollmentSeedContext,
  hotpSeedContext,
  insertEnrollment,
  lockEnrollment,
  lockHotp,
  recordResyncAttempt,
  resetSecondFactors,
  storeHotp,
} from './factors.repo.ts';
export {
  consumeRecoveryCode,
  type ImportedTotp,
  insertImportedTotps,
  lockTotp,
  recordTotpStep,
  replaceRecoveryCodes,
  type StoredTotp,
  sampleTotps,
  storeTotp,
  totpSeedContext,
} from './mfa.repo.ts';
export { type OtpAlgorithm, totpAt, totpStep } from './otp.ts';
export {
  findRememberedDevice,
  forgetRememberedDevices,
  insertRememberedDevice,
  touchRememberedDevice,
} from './remembered-devices.repo.ts';
export {
  type AssertionCheck,
  type AuthenticationExpected,
  assertedCredentialId,
  authenticationOptions,
  checkAssertion,
} from './webauthn/authentication.ts';
export { FidoMetadata, type FidoMetadataStatus } from './webauthn/fido-metadata.ts';
export {
  consumeCeremony,
  deleteExpiredCeremonies,
  findCeremony,
  findPasskeyByCredentialId,
  insertCeremony,
  listPasskeys,
  lockPasskey,
  type PasskeyRow,
  recordPasskeyUse,
} from './webauthn/passkeys.repo.ts';
export {
  defaultPasskeyName,
  enrollPasskey,
  presentPasskey,
  registrationProblem,
  storePasskey,
  trustSources,
  verifyRegistrationAnswer,
} from './webauthn/passkeys.service.ts';
export {
  CEREMONY_TTL_MS,
  checkRegistration,
  type RegisteredPasskey,
  type RegistrationExpected,
  registrationOptions,
} from './webauthn/registration.ts';
export {
  passkeyLoginOn,
  type WebauthnPolicy,
  webauthnFactorAllowed,
  webauthnPolicy,
} from './webauthn/webauthn-policy.ts';
