// The discovery resources (RFC 7644 §4, RFC 7643 §5-7): what this server supports, its two
// resource types and the schemas of their attributes.
import { MAX_FILTER_BYTES } from './scim-filter.ts';
import { MAX_PAGE } from './scim-list.ts';
import { MAX_PATCH_OPERATIONS } from './scim-patch.ts';
import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from './scim-schemas.ts';

/** Spec doc 2, Limits: SCIM. */
export const MAX_SCIM_BODY_BYTES = 1_048_576;

const meta = (base: string, resourceType: string, path: string) => ({
  resourceType,
  location: `${base}/${path}`,
});

export const serviceProviderConfig = (base: string) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
  documentationUri: 'https://github.com/proudauth/proudauth/blob/main/docs/scim.md',
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: MAX_PAGE },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: true },
  authenticationSchemes: [
    {
      type: 'oauthbearertoken',
      name: 'Connector bearer token',
      description: `A SCIM connector's credential; bodies up to ${MAX_SCIM_BODY_BYTES} bytes, filters up to ${MAX_FILTER_BYTES} bytes, ${MAX_PATCH_OPERATIONS} PATCH operations`,
      primary: true,
    },
  ],
  meta: meta(base, 'ServiceProviderConfig', 'ServiceProviderConfig'),
});

const resourceType = (base: string, id: string, endpoint: string, schema: string, ext: string[]) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
  id,
  name: id,
  endpoint: `/${endpoint}`,
  schema,
  schemaExtensions: ext.map((s) => ({ schema: s, required: false })),
  meta: meta(base, 'ResourceType', `ResourceTypes/${id}`),
});

export const resourceTypes = (base: string) => [
  resourceType(base, 'User', 'Users', USER_SCHEMA, [ENTERPRISE_SCHEMA]),
  resourceType(base, 'Group', 'Groups', GROUP_SCHEMA, []),
];

type Attr = Record<string, unknown>;
const attr = (name: string, extra: Partial<Attr> = {}): Attr => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});
const complex = (name: string, subs: Attr[], multiValued: boolean): Attr =>
  attr(name, { type: 'complex', multiValued, subAttributes: subs });
const multi = (name: string) =>
  complex(name, [attr('value'), attr('display'), attr('type'), attr('primary', { type: 'boolean' })], true);

const USER_ATTRIBUTES: Attr[] = [
  attr('userName', { required: true, uniqueness: 'server' }),
  complex(
    'name',
    ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'].map((n) =>
      attr(n),
    ),
    false,
  ),
  ...['displayName', 'nickName', 'title', 'userType', 'preferredLanguage', 'locale', 'timezone'].map((n) =>
    attr(n),
  ),
  attr('profileUrl', { type: 'reference', referenceTypes: ['external'] }),
  attr('active', { type: 'boolean' }),
  attr('password', { mutability: 'writeOnly', returned: 'never' }),
  ...['emails', 'phoneNumbers', 'ims', 'photos', 'roles', 'entitlements', 'x509Certificates'].map(multi),
  complex(
    'addresses',
    ['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country', 'type'].map((n) => attr(n)),
    true,
  ),
];

const ENTERPRISE_ATTRIBUTE_DEFS: Attr[] = [
  ...['employeeNumber', 'costCenter', 'organization', 'division', 'department'].map((n) => attr(n)),
  complex(
    'manager',
    [attr('value'), attr('$ref', { type: 'reference' }), attr('displayName', { mutability: 'readOnly' })],
    false,
  ),
];

const GROUP_ATTRIBUTES: Attr[] = [
  attr('displayName', { required: true, uniqueness: 'server' }),
  complex(
    'members',
    [attr('value', { mutability: 'immutable' }), attr('display', { mutability: 'readOnly' }), attr('type')],
    true,
  ),
];

const schema = (base: string, id: string, name: string, attributes: Attr[]) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
  id,
  name,
  attributes,
  meta: meta(base, 'Schema', `Schemas/${id}`),
});

export const schemas = (base: string) => [
  schema(base, USER_SCHEMA, 'User', USER_ATTRIBUTES),
  schema(base, ENTERPRISE_SCHEMA, 'EnterpriseUser', ENTERPRISE_ATTRIBUTE_DEFS),
  schema(base, GROUP_SCHEMA, 'Group', GROUP_ATTRIBUTES),
];
