// Body of POST /emergency/controls (spec doc 2, "Keys and emergency controls"; docs/emergency.md):
// which target, which action, and why. The actions each target type takes are listed here once.
import { decodeBody, enumOf, object, string } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';

export const EMERGENCY_ACTIONS = {
  identity_provider: ['disable', 'enable'],
  hook: ['disable', 'enable'],
  webhook: ['pause', 'disable', 'enable'],
  client: ['disable', 'enable'],
  organization: ['disable', 'enable'],
  service_principal: ['disable', 'enable'],
  grant_type: ['disable', 'enable'],
} as const;

export type EmergencyTargetType = keyof typeof EMERGENCY_ACTIONS;
export type EmergencyAction = 'disable' | 'enable' | 'pause';

export interface EmergencyControl {
  targetType: EmergencyTargetType;
  targetId: string;
  action: EmergencyAction;
  reason: string;
}

const TARGET_TYPES = Object.keys(EMERGENCY_ACTIONS) as EmergencyTargetType[];

const body = object({
  target_type: enumOf(TARGET_TYPES),
  target_id: string({ minLength: 1, maxLength: 200, pattern: /[\x21-\x7e]+/ }),
  action: enumOf(['disable', 'enable', 'pause'] as const),
  reason: string({ minLength: 5, maxLength: 500, pattern: /[^\p{Cc}]+/u }),
});

export function decodeEmergencyControl(raw: unknown): EmergencyControl {
  const { targetType, targetId, action, reason } = decodeBody(body, raw);
  if (!(EMERGENCY_ACTIONS[targetType] as readonly string[]).includes(action))
    throw problem.validation([
      {
        field: 'action',
        code: 'unsupported_action',
        detail: `a ${targetType} takes ${EMERGENCY_ACTIONS[targetType].join(', ')}`,
      },
    ]);
  return { targetType, targetId, action, reason };
}
