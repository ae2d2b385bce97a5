// Tabs of one browser share a sign-in: a magic link from a mail client opens in a new tab, which
// finishes the transaction the first tab started. The tab that finishes leaves a mark in
// localStorage (same origin, same browser profile only); the first tab hears it through the
// storage event, or finds it when its transaction can no longer be read (the cookie is cleared on
// completion), and says where the sign-in went instead of blaming the browser.
const PREFIX = 'proudauth.signin.done.';
/** Marks live as long as a transaction could; older ones are dropped. */
const MAX_AGE_MS = 24 * 60 * 60 * 1000;

export function markFinished(transactionId: string): void {
  try {
    localStorage.setItem(PREFIX + transactionId, String(Date.now()));
  } catch {
    // storage refused (private mode quotas): the other tab then only sees the plain error
  }
}

export function finishedElsewhere(transactionId: string): boolean {
  try {
    const at = Number(localStorage.getItem(PREFIX + transactionId));
    return at > 0 && Date.now() - at < MAX_AGE_MS;
  } catch {
    return false;
  }
}

/** Calls onFinished once when another tab finishes this transaction; drops stale marks first. */
export function watchOtherTabs(transactionId: string, onFinished: () => void): void {
  try {
    const now = Date.now();
    for (let i = localStorage.length - 1; i >= 0; i--) {
      const key = localStorage.key(i);
      if (key?.startsWith(PREFIX) && !(now - Number(localStorage.getItem(key)) < MAX_AGE_MS))
        localStorage.removeItem(key);
    }
  } catch {
    return;
  }
  const listener = (e: StorageEvent) => {
    if (e.key !== PREFIX + transactionId || !e.newValue) return;
    window.removeEventListener('storage', listener);
    onFinished();
  };
  window.addEventListener('storage', listener);
}
