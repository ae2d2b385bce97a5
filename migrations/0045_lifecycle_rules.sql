-- Lifecycle rules (document 2 "Lifecycle rules", task lifecycle.users): when the dormant rule last
-- flagged the account (a flag older than the account's last sign-in belongs to an earlier dormancy,
-- so the rule reports each dormancy once), and a deactivation an administrator scheduled with
-- PUT /users/{user}/scheduled-deactivation (document 1 "Recovery and account administration"),
-- with the administrator's reason.
alter table users add column dormant_flagged_at timestamptz;
alter table users add column deactivate_at timestamptz;
alter table users add column deactivation_reason text;
create index users_deactivate_at on users (realm_id, deactivate_at) where deactivate_at is not null;
