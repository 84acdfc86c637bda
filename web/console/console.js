// The web console: plain browser JavaScript over the public API, same origin, nothing loaded from elsewhere.
import { API, api, apiKey, authHeaders, keyInput } from './api.js';

const TERMINAL_JOB = new Set(['success', 'failed', 'cancelled']);
const TERMINAL_BATCH = new Set(['completed', 'cancelled', 'failed']);

const $ = (selector, root = document) => root.querySelector(selector);
const form = $('#job-form');
const photosInput = $('#photos');
const modeSelect = $('#mode');
const credits = $('#credits');
const cards = $('#cards');

// The balance is read once the key field is left, not on every keystroke.
keyInput.addEventListener('change', () => refreshCredits());

async function refreshCredits() {
  try {
    const { body } = await api('/quota');
    const { remaining, active, authorized } = body.quota;
    // A guest has no balance until its first job opens the trial session (`active` false until then).
    if (!authorized && !active) credits.textContent = 'Guest trial: credits show after the first job';
    else
      credits.textContent =
        remaining === null ? 'Credits left: unlimited (master key)' : `Credits left: ${remaining}`;
  } catch (error) {
    credits.textContent = `Credits: ${error.message}`;
  }
}

// ------------------------------------------------------------------ the form

function showOptionsFor(mode) {
  for (const element of document.querySelectorAll('[data-modes]')) {
    element.hidden = !element.dataset.modes.split(' ').includes(mode);
  }
}
modeSelect.addEventListener('change', () => showOptionsFor(modeSelect.value));
showOptionsFor(modeSelect.value);

const dropZone = $('#drop-zone');
for (const type of ['dragenter', 'dragover']) {
  dropZone.addEventListener(type, (event) => {
    event.preventDefault();
    dropZone.classList.add('dragging');
  });
}
for (const type of ['dragleave', 'drop']) {
  dropZone.addEventListener(type, () => dropZone.classList.remove('dragging'));
}
dropZone.addEventListener('drop', (event) => {
  event.preventDefault();
  if (event.dataTransfer?.files?.length) photosInput.files = event.dataTransfer.files;
});

const isZip = (file) => file.type === 'application/zip' || /\.zip$/i.test(file.name);

/** The options of the chosen mode as [name, value] pairs, exactly the fields the API receives. */
function optionFields(mode) {
  const fields = [];
  const visible = (id) => !$(`#${id}`).closest('[data-modes]').hidden;
  if (visible('background') && $('#background').value) fields.push(['background', $('#background').value]);
  if (visible('background-file') && $('#background-file').files[0])
    fields.push(['background_file', $('#background-file').files[0]]);
  if (visible('plate-color')) {
    fields.push(['plate_color', $('#plate-color').value]);
    fields.push(['plate_smoothing', $('#plate-smoothing').checked ? 'true' : 'false']);
    fields.push(['plate_mask_only', $('#plate-mask-only').checked ? 'true' : 'false']);
  }
  // Framing, canvas, shadow, format and size; each sent only when chosen, so the API's defaults apply.
  for (const [id, name] of [
    ['framing', 'framing'],
    ['aspect', 'aspect'],
    ['shadow', 'shadow'],
    ['format', 'format'],
    ['max-width', 'max_width'],
  ]) {
    if (visible(id) && $(`#${id}`).value) fields.push([name, $(`#${id}`).value]);
  }
  return mode === 'analyze' ? [] : fields;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const formError = $('#form-error');
  const files = [...photosInput.files];
  if (files.length === 0) {
    formError.textContent = 'Choose or drop at least one photo.';
    formError.hidden = false;
    return;
  }
  formError.hidden = true;
  const mode = modeSelect.value;
  const options = optionFields(mode);
  // A ZIP is always a batch: for a mode batches do not take, the service's answer says which they do.
  for (const file of files) {
    if (isZip(file)) runBatch(file, mode, options);
    else runJob(file, mode, options);
  }
});

// ------------------------------------------------------------------ cards

function curlFor(route, fileField, file, fields) {
  const parts = ['curl -s'];
  if (apiKey()) parts.push('-H "X-API-Key: $PHOTO_JOBS_API_KEY"');
  for (const [name, value] of fields) {
    parts.push(
      value instanceof File ? `-F ${name}=@${shellWord(value.name)}` : `-F ${name}=${shellWord(value)}`,
    );
  }
  parts.push(`-F ${fileField}=@${shellWord(file.name)}`);
  parts.push(`${API}${route}`);
  return parts.join(' \\\n  ');
}
const shellWord = (value) =>
  /^[\w@%+=:,./#-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;

function newCard(templateId, title, curl) {
  const card = $(`#${templateId}`).content.firstElementChild.cloneNode(true);
  $('.card-title', card).textContent = title;
  $('.curl pre', card).textContent = curl;
  $('.copy-curl', card).addEventListener('click', async (event) => {
    try {
      await navigator.clipboard.writeText(curl);
      event.target.textContent = 'Copied';
    } catch {
      $('.curl', card).open = true;
    }
  });
  cards.prepend(card);
  const started = performance.now();
  const timer = setInterval(() => {
    $('.elapsed', card).textContent = `${((performance.now() - started) / 1000).toFixed(1)} s`;
  }, 100);
  return { card, stop: () => clearInterval(timer) };
}

function setStatus(card, status) {
  const badge = $('.status', card);
  badge.textContent = status;
  badge.dataset.status = status;
}

function showError(card, message) {
  const element = $('.error', card);
  element.textContent = message;
  element.hidden = false;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function runJob(file, mode, options) {
  const { card, stop } = newCard(
    'job-card',
    file.name,
    curlFor('/jobs', 'file', file, [['mode', mode], ...options]),
  );
  setStatus(card, 'uploading');
  try {
    const body = new FormData();
    body.append('mode', mode);
    for (const [name, value] of options) body.append(name, value);
    body.append('file', file);
    let { body: job } = await api('/jobs', { method: 'POST', body });
    setStatus(card, job.status);
    // Poll with a gentle backoff: most jobs end within a few seconds, some take a minute.
    for (let wait = 300; !TERMINAL_JOB.has(job.status); wait = Math.min(wait * 1.5, 2000)) {
      await sleep(wait);
      ({ body: job } = await api(`/jobs/${job.id}`));
      setStatus(card, job.status);
    }
    if (job.status === 'success') showOutput(card, file, job);
    else showError(card, job.error?.message ?? job.message ?? `The job was ${job.status}`);
    if (job.quota) $('.card-credits', card).textContent = `Credits left: ${job.quota.remaining}`;
  } catch (error) {
    setStatus(card, 'failed');
    showError(card, error.message);
  } finally {
    stop();
    refreshCredits();
  }
}

function showOutput(card, file, job) {
  const output = job.output ?? {};
  // A success that may still show a readable plate must not look like every other success.
  const plateVisible = output.plate_hidden === false && job.operation === 'studio_background';
  $('.plate-warning', card).hidden = !plateVisible;
  $('.plate-warning-text', card).hidden = !plateVisible;
  const isMask = output.output_kind === 'mask';
  if (output.url && !isMask) {
    const compare = $('.compare', card);
    $('.before', card).src = URL.createObjectURL(file);
    $('.before', card).alt = `Original: ${file.name}`;
    $('.after', card).src = output.url;
    $('.after', card).alt = `Result: ${file.name}`;
    const range = $('.compare-range', card);
    const frame = $('.compare-frame', card);
    // Starts at the result ("after"); the divider and the labels say which side is which.
    const update = () => {
      frame.style.setProperty('--reveal', `${range.value}%`);
      $('.before-tag', card).hidden = Number(range.value) >= 100;
      $('.after-tag', card).hidden = Number(range.value) <= 0;
    };
    range.addEventListener('input', update);
    update();
    if (output.plates?.length) outlinePlates(card, output.plates);
    compare.hidden = false;
  } else if (output.url) {
    const only = $('.result-only', card);
    only.src = output.url;
    only.alt = `Result: mask of ${file.name}`;
    only.hidden = false;
  }
  if (output.url) {
    const link = $('.open-result', card);
    link.href = output.url;
    link.hidden = false;
  }
  const masks = $('.masks', card);
  for (const [field, label] of [
    ['plate_mask_url', 'Plate mask'],
    ['background_mask_url', 'Background mask'],
  ]) {
    if (!output[field] || output[field] === output.url) continue;
    const figure = document.createElement('figure');
    const image = document.createElement('img');
    image.src = output[field];
    image.alt = `${label} of ${file.name}`;
    const caption = document.createElement('figcaption');
    caption.textContent = label;
    figure.append(image, caption);
    masks.append(figure);
  }
  if (output.analysis) showAnalysis($('.analysis', card), output.analysis);
}

/**
 * The plates the job reports, drawn over the result: the outline is in the result's pixels, and the SVG
 * is cropped as the result image is (object-fit: cover), so each outline lands on its fill.
 */
function outlinePlates(card, plates) {
  const svg = $('.plate-outlines', card);
  const after = $('.after', card);
  const SVG = 'http://www.w3.org/2000/svg';
  const draw = () => {
    svg.setAttribute('viewBox', `0 0 ${after.naturalWidth} ${after.naturalHeight}`);
    svg.setAttribute('preserveAspectRatio', 'xMidYMid slice');
    svg.replaceChildren(
      ...plates.map(({ corners, score }) => {
        const outline = document.createElementNS(SVG, 'polygon');
        outline.setAttribute('points', corners.map(([x, y]) => `${x},${y}`).join(' '));
        const title = document.createElementNS(SVG, 'title');
        title.textContent = `Plate, score ${score}`;
        outline.append(title);
        return outline;
      }),
    );
  };
  if (after.complete && after.naturalWidth) draw();
  else after.addEventListener('load', draw, { once: true });
  const toggle = $('.outline-plates', card);
  const show = () => {
    svg.toggleAttribute('hidden', !toggle.checked);
  };
  toggle.addEventListener('change', show);
  show();
  $('.outline-toggle', card).hidden = false;
}

function showAnalysis(list, analysis) {
  const rows = [
    ['Photo type', analysis.photo_type],
    ['View', analysis.view],
  ];
  for (const [name, value] of rows) {
    if (!value) continue;
    const term = document.createElement('dt');
    term.textContent = name;
    const detail = document.createElement('dd');
    detail.textContent = `${value.label} (${value.conf}% confident)`;
    list.append(term, detail);
  }
  const detected = Object.entries(analysis.detections ?? {});
  if (detected.length) {
    const term = document.createElement('dt');
    term.textContent = 'Detected';
    const detail = document.createElement('dd');
    detail.textContent = detected.map(([name, { conf }]) => `${name} ${conf}%`).join(', ');
    list.append(term, detail);
  }
  list.hidden = false;
}

async function runBatch(archive, mode, options) {
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
  try {
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
  } catch (error) {
    setStatus(card, 'failed');
    showError(card, error.message);
  } finally {
    stop();
    refreshCredits();
  }
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

refreshCredits();
