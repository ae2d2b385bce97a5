// The hooks context's public surface (docs/hooks.md): the calls the flows make at their hook
// points, the emergency control's state change, and the deps main/ builds.
export type { HookClaims, HookOutcome, TokenClaims } from './hook-answer.ts';
export { withoutProtected } from './hook-answer.ts';
export {
  afterSignIn,
  beforeRegistration,
  beforeTokenIssuance,
  callStepHook,
  type HookCallDeps,
  type HookData,
  type HookPoint,
  type RegistrationVerdict,
  type StepHookVerdict,
  type TokenVerdict,
} from './hook-call.ts';
export { decodeCreateHook, type HookInput } from './hooks.decode.ts';
export type { HookKind, HookRow, HookState } from './hooks.repo.ts';
export {
  createHookInTx,
  type HookAdminDeps,
  removePluginHooksInTx,
  setHookStateInTx,
  validateHookUrl,
} from './hooks.service.ts';
