-- SCIM connectors of one organization (docs/scim.md, "Organization connectors"): an organization's
-- own directory provisions accounts that join that organization and its groups. Null: a realm
-- connector, as before.
alter table scim_connectors add column organization_id text;
alter table scim_connectors add constraint scim_connectors_organization
  foreign key (realm_id, organization_id) references organizations (realm_id, id);
create index scim_connectors_of_organization on scim_connectors (realm_id, organization_id)
  where organization_id is not null;
-- An organization connector sees the accounts it provisioned.
create index scim_users_connector on scim_users (realm_id, connector_id, user_id);
