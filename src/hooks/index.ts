// The hooks context's public surface (docs/hooks.md): the calls the flows make at their hook
// points, the emergency control's state change, and the deps main/ builds.
export type { HookClaims, HookOutcome, TokenClaims } from './hook-answer.ts';
export { withoutProtected } from './hook-answer.ts';
export {
  afterSignIn,
  beforeRegistration,
  beforeTokenIssuance,
  type HookCallDeps,
  type HookData,
  type HookPoint,
  type RegistrationVerdict,
  type TokenVerdict,
} from './hook-call.ts';
export type { HookKind, HookState } from './hooks.repo.ts';
export { type HookAdminDeps, setHookStateInTx } from './hooks.service.ts';
