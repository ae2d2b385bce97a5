// The personal data export on the account page (docs/jobs.md): POST /me/exports queues the
// user.export job, the page polls GET /me/jobs/{id} until it ends, then fetches the file through a
// download token (POST /me/jobs/{id}/downloads, POST /me/job-downloads) and hands it to the browser.
import { h } from '../lib/dom.js';
import { t } from '../lib/i18n.js';
import type { View } from './methods.js';

interface Job {
  id: string;
  state: string;
}

const FINAL = ['succeeded', 'failed', 'dead_letter', 'cancelled'];
/** Polling starts quick (a small export takes a second) and slows to this. */
const MAX_POLL_MS = 5000;

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function untilDone(view: View, jobId: string): Promise<Job> {
  let delay = 500;
  for (;;) {
    const job = (await view.api.call('GET', `/me/jobs/${encodeURIComponent(jobId)}`)) as Job;
    if (FINAL.includes(job.state)) return job;
    await wait(delay);
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}

async function download(view: View, jobId: string): Promise<void> {
  const issued = (await view.api.call('POST', `/me/jobs/${encodeURIComponent(jobId)}/downloads`)) as {
    download_token: string;
  };
  const { blob, filename } = await view.api.file('/me/job-downloads', {
    download_token: issued.download_token,
  });
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  // The browser has taken the file once the click ran; the next task may let it go.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function dataExportSection(view: View): HTMLElement {
  const start = h('button', { type: 'button', class: 'secondary' }, t('acct.export_start'));
  const status = h('p', { class: 'small', role: 'status' });
  start.addEventListener('click', () => {
    start.disabled = true;
    status.textContent = t('acct.export_preparing');
    void (async () => {
      try {
        const { job_id } = (await view.api.call('POST', '/me/exports')) as { job_id: string };
        const job = await untilDone(view, job_id);
        if (job.state !== 'succeeded') {
          status.textContent = t('acct.export_failed');
          start.disabled = false;
          return;
        }
        const save = h('button', { type: 'button', class: 'primary' }, t('acct.export_download'));
        save.addEventListener('click', () => {
          void download(view, job.id).catch((e: unknown) => view.fail(e));
        });
        status.textContent = t('acct.export_ready');
        start.replaceWith(save);
        save.focus();
      } catch (e) {
        await view.fail(e);
      }
    })();
  });
  return h(
    'section',
    { 'aria-labelledby': 'data' },
    h('h2', { id: 'data' }, t('acct.export_title')),
    h('p', {}, t('acct.export_help')),
    start,
    status,
  );
}
