-- Outbound notifications (mail and SMS) and the one-time codes behind email and SMS sign-in,
-- magic links and contact verification.
--
-- notifications: written in the transaction of the request that causes them, sent by the worker
-- under a per-row lease (FOR UPDATE SKIP LOCKED). The payload (recipient and rendered message)
-- is cleared after delivery.payload_retention; the row after privacy.history_retention.
create table notifications (
  realm_id text not null,
  id text not null,
  channel text not null check (channel in ('email', 'sms')),
  template text not null,
  organization_id text,
  state text not null check (state in ('queued', 'sending', 'sent', 'failed')),
  -- {to, subject, text, html} for email, {to, text} for SMS; null once purged.
  payload jsonb,
  attempts integer not null default 0,
  available_at timestamptz not null,
  locked_by text,
  locked_until timestamptz,
  last_error text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  sent_at timestamptz,
  payload_purged_at timestamptz,
  primary key (realm_id, id)
);
create index notifications_due on notifications (available_at) where state = 'queued';
create index notifications_leased on notifications (locked_until) where state = 'sending';
create index notifications_created on notifications (created_at);

-- A code or link sent for one purpose of one sign-in transaction. Only digests are stored; a
-- challenge is consumed once. user_id is null for identifiers that match no account: such a
-- challenge is recorded (the answer looks the same) but nothing is sent and it never verifies.
create table signin_challenges (
  realm_id text not null,
  transaction_id text not null,
  purpose text not null,
  channel text not null,
  user_id text,
  destination text,
  code_digest text,
  link_digest text,
  sends integer not null default 0,
  last_sent_at timestamptz,
  expires_at timestamptz not null,
  consumed_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, transaction_id, purpose)
);
create index signin_challenges_link on signin_challenges (realm_id, link_digest) where link_digest is not null;
-- Codes sent to one address across transactions (the per-destination hourly limit).
create index signin_challenges_destination on signin_challenges (realm_id, destination, last_sent_at);
