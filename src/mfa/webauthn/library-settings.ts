// The ceremony library ships default trust anchors for a few attestation formats; with anchors it
// validates paths itself and then fetches the CRLs the presented certificates name. Trust is
// decided in attestation-trust.ts instead, so the library gets no anchors at all, once, when this
// module loads. Its metadata service is never initialized.
import { SettingsService } from '@simplewebauthn/server';

for (const identifier of [
  'android-key',
  'android-safetynet',
  'apple',
  'mds',
  'packed',
  'tpm',
  'fido-u2f',
] as const) {
  SettingsService.setRootCertificates({ identifier, certificates: [] });
}
