// One ZIP's batch: created, polled until it ends, paused, resumed or cancelled, and its results downloaded.
import { API, api, authHeaders } from './api.js';
import { $, curlFor, newCard, runOnCard, setStatus, showError, sleep } from './cards.js';

const TERMINAL_BATCH = new Set(['completed', 'cancelled', 'failed']);

export async function runBatch(archive, mode, options) {
  const fields = [
    ['mode', mode],
    // A batch takes every option a job takes (issue 26).
    ...options,
  ];
  const { card, stop } = newCard(
    'batch-card',
    `Batch: ${archive.name}`,
    curlFor('/batches', 'archive', archive, fields),
  );
  setStatus(card, 'uploading');
  await runOnCard(card, stop, async () => {
    const body = new FormData();
    for (const [name, value] of fields) body.append(name, value);
    body.append('archive', archive);
    let { body: created } = await api('/batches', { method: 'POST', body });
    let batch = created.batch;
    for (const button of card.querySelectorAll('[data-action]')) {
      button.addEventListener('click', async () => {
        try {
          ({ body: created } = await api(`/batches/${batch.id}/${button.dataset.action}`, {
            method: 'POST',
          }));
          showBatch(card, created.batch);
        } catch (error) {
          showError(card, error.message);
        }
      });
    }
    const download = $('.download', card);
    download.href = `${API}/batches/${batch.id}/download`;
    download.download = `${archive.name.replace(/\.zip$/i, '')}-results.zip`;
    download.addEventListener('click', (event) => {
      // The download needs the key in a header, which a plain link cannot send.
      event.preventDefault();
      downloadBatch(card, download);
    });
    showBatch(card, batch);
    while (!TERMINAL_BATCH.has(batch.status)) {
      await sleep(1000);
      ({ body: created } = await api(`/batches/${batch.id}`));
      batch = created.batch;
      showBatch(card, batch);
    }
  });
}

function showBatch(card, batch) {
  const { total, skipped, succeeded, failed, cancelled, processing, queued } = batch.counts;
  const done = skipped + succeeded + failed + cancelled;
  setStatus(card, batch.status === 'paused' ? `paused (${batch.pause_reason})` : batch.status);
  const progress = $('.progress', card);
  progress.max = Math.max(total, 1);
  progress.value = done;
  progress.setAttribute('aria-valuetext', `${done} of ${total} done`);
  $('.counts', card).textContent =
    `${done} of ${total} done: ${succeeded} succeeded, ${failed} failed, ${skipped} skipped, ` +
    `${cancelled} cancelled; ${processing} processing, ${queued} queued`;
  const finished = TERMINAL_BATCH.has(batch.status);
  if (batch.error?.message) showError(card, batch.error.message);
  $('[data-action="pause"]', card).disabled = finished || batch.status === 'paused';
  $('[data-action="resume"]', card).disabled = batch.status !== 'paused';
  $('[data-action="cancel"]', card).disabled = finished;
  $('.download', card).hidden = !finished || succeeded === 0;
  const items = $('.items', card);
  items.replaceChildren(
    ...batch.items.map((item) => {
      const row = document.createElement('li');
      row.textContent = `${item.name}: ${item.status}`;
      if (item.error?.message) row.textContent += ` (${item.error.message})`;
      if (item.result) {
        const link = document.createElement('a');
        link.href = item.result;
        link.textContent = 'result';
        link.target = '_blank';
        row.append(' ', link);
      }
      return row;
    }),
  );
}

/**
 * The download needs the key in a header, so the console asks for the archive's storage link as JSON
 * (202: being built, ask again) and then opens that link, which needs no key.
 */
async function downloadBatch(card, link) {
  try {
    for (;;) {
      const response = await fetch(link.href, {
        credentials: 'same-origin',
        headers: { ...authHeaders(), Accept: 'application/json' },
      });
      const body = await response.json().catch(() => null);
      if (response.status === 202) {
        await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000);
        continue;
      }
      if (!response.ok) throw new Error(body?.message ?? `${response.status} ${response.statusText}`);
      const save = document.createElement('a');
      save.href = body.url;
      save.download = link.download;
      save.click();
      return;
    }
  } catch (error) {
    showError(card, error.message);
  }
}
