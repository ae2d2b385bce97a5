-- A registration for an address that already has an account answers as a new registration would
-- (docs/registration.md): the transaction then stands for the account that was not created. It
-- keeps what that account would show (the display name typed) and where it would stop (email
-- verification, or an administrator's approval); the owner of the address is told by mail.
alter table signin_transactions add column registration_decoy jsonb;
