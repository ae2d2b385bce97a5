// Schema URNs of the resources served (RFC 7643 §8.7) and the attributes a User keeps in its
// SCIM record because the account model has no column for them.
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** Core User attributes kept as given (RFC 7643 §4.1), besides userName, displayName and active. */
export const KEPT_USER_ATTRIBUTES = [
  'name',
  'nickName',
  'profileUrl',
  'title',
  'userType',
  'preferredLanguage',
  'locale',
  'timezone',
  'emails',
  'phoneNumbers',
  'addresses',
  'ims',
  'photos',
  'roles',
  'entitlements',
  'x509Certificates',
] as const;

/** Enterprise extension attributes (RFC 7643 §4.3). */
export const ENTERPRISE_ATTRIBUTES = [
  'employeeNumber',
  'costCenter',
  'organization',
  'division',
  'department',
  'manager',
] as const;
