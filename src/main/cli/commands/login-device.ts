// identity-cli login --device (RFC 8628, docs/oauth-device.md): for a terminal without a browser
// nearby. Prints the verification address and the user code, then polls the token endpoint at
// the server's interval (5 s more after each slow_down) until the person signed in elsewhere.
import { setTimeout as sleep } from 'node:timers/promises';
import { pollDeviceToken, requestDeviceCodes, type TokenSet } from '../api-client.ts';
import { CliError } from '../cli-error.ts';
import { cliIo } from '../cli-io.ts';

const say = (line = '') => cliIo().stderr.write(`${line}\n`);

export async function deviceSignIn(server: string, realm: string, audience: string): Promise<TokenSet> {
  const codes = await requestDeviceCodes(server, realm, audience);
  say(`To sign in, open ${codes.verificationUri}`);
  say(`and enter the code ${codes.userCode}`);
  if (codes.verificationUriComplete) say(`(or open ${codes.verificationUriComplete})`);
  say('Waiting for the sign-in on the other device...');
  const deadline = Date.now() + codes.expiresIn * 1000;
  let interval = codes.interval;
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const polled = await pollDeviceToken(server, realm, codes.deviceCode, audience, new Date());
    if ('tokens' in polled) return polled.tokens;
    if (polled.waiting === 'slow_down') interval += 5;
  }
  throw new CliError('the code expired before anyone signed in; run login again');
}
