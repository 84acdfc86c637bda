// One photo's job: created, polled until it ends, and its result shown (compare slider, plates, masks, analysis).
import { api } from './api.js';
import { $, curlFor, newCard, runOnCard, setStatus, showError, sleep } from './cards.js';

const TERMINAL_JOB = new Set(['success', 'failed', 'cancelled']);

export async function runJob(file, mode, options) {
  const { card, stop } = newCard(
    'job-card',
    file.name,
    curlFor('/jobs', 'file', file, [['mode', mode], ...options]),
  );
  setStatus(card, 'uploading');
  await runOnCard(card, stop, async () => {
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
  });
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
