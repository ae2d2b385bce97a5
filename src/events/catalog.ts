// Event types emitted to the outbox, with the data members each carries (spec doc 2, Catalog).
// Data holds identifiers, states, reasons and timestamps only: never secrets, emails or names.

export interface EventData {
  'user.created': { user_id: string; created_via: string };
  'security.alert': {
    signal: string;
    audit_event_id: string;
    event_type: string;
    actor_type: string;
    actor_id: string | null;
    subject_type?: string;
    subject_id?: string;
  };
  'signing_key.rotated': {
    mode: 'planned' | 'emergency';
    new_kid: string;
    previous_kid: string | null;
    previous_key_compromised: boolean;
  };
}

export type EventType = keyof EventData;
