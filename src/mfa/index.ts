// The factors context's public surface: TOTP secrets and recovery codes.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export {
  consumeRecoveryCode,
  lockTotp,
  recordTotpStep,
  replaceRecoveryCodes,
  storeTotp,
  totpSeedContext,
} from './mfa.repo.ts';
