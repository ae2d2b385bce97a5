-- Application permission names are unique per realm ignoring case (docs/api-roles.md), like role
-- names within their boundary.
create unique index permissions_name_ci on permissions (realm_id, lower(name));
