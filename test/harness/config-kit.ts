// A configuration document with one object of every kind, for the configuration tests.

type Json = Record<string, unknown>;

export const ORDERS = 'https://orders.example.com/api';

/** A document with one of everything. */
export const sampleDocument = (extra: Json = {}): Json => ({
  format: 'service.realm-config.v1',
  policy: { mfa: { requirement: 'required' }, data_access: { log_identity_reads: true } },
  expected_policy_revision: 0,
  resources: [
    {
      name: 'Orders',
      audience: ORDERS,
      scopes: [{ name: 'orders:read' }, { name: 'orders:write', sensitivity: 'high' }],
    },
  ],
  clients: [
    {
      client_id: 'shop-web',
      name: 'Shop',
      type: 'web',
      redirect_uris: ['https://shop.example.com/callback'],
    },
    { client_id: 'billing', name: 'Billing', type: 'service' },
  ],
  permissions: [{ name: 'orders.refund', description: 'Refund an order' }, { name: 'realm.users.read' }],
  roles: [{ name: 'refunder', permissions: ['orders.refund'] }],
  client_resource_grants: {
    'shop-web': { [ORDERS]: ['orders:read'], 'builtin:userinfo': { scopes: ['openid', 'email'] } },
    billing: { [ORDERS]: { scopes: ['orders:read', 'orders:write'], subject_types: ['service_principal'] } },
  },
  ...extra,
});
