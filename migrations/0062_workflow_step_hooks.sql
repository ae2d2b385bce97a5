-- A fourth hook kind (docs/hooks.md): workflow_step, the hooks a lifecycle workflow's call_hook
-- step calls by id (docs/workflows.md). Only the list of kinds changes.
alter table hooks drop constraint hooks_kind_check;
alter table hooks add constraint hooks_kind_check
  check (kind in ('before_registration', 'before_token_issuance', 'after_sign_in', 'workflow_step'));
