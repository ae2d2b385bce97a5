// What the token endpoint's device grant may do with a device authorization (oauth/grants/
// device-code.grant.ts): lock it by its device code, note a poll, and spend it once.
export {
  type DeviceAuthorizationRow,
  findByDeviceCode,
  lockByDeviceCode,
  markConsumed,
  recordPoll,
} from './device-authorizations.repo.ts';
