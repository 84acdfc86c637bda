// The web console: plain browser JavaScript over the public API, same origin, nothing loaded from elsewhere.
import { keyInput } from './api.js';
import { runBatch } from './batch-card.js';
import { $ } from './cards.js';
import { refreshCredits } from './credits.js';
import { runJob } from './job-card.js';

const form = $('#job-form');
const photosInput = $('#photos');
const modeSelect = $('#mode');

// The balance is read once the key field is left, not on every keystroke.
keyInput.addEventListener('change', () => refreshCredits());

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

refreshCredits();
