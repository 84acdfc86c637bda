// A card per job or batch: its title, the curl command that does the same, a running clock, a status badge.
import { API, apiKey } from './api.js';
import { refreshCredits } from './credits.js';

export const $ = (selector, root = document) => root.querySelector(selector);
const cards = $('#cards');

export function curlFor(route, fileField, file, fields) {
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

export function newCard(templateId, title, curl) {
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

export function setStatus(card, status) {
  const badge = $('.status', card);
  badge.textContent = status;
  badge.dataset.status = status;
}

export function showError(card, message) {
  const element = $('.error', card);
  element.textContent = message;
  element.hidden = false;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A card's work, from its first request to its end: a failure marks the card failed with its message; either
 * way the card's clock stops and the balance is read again (a job or batch may have spent credits).
 */
export async function runOnCard(card, stop, work) {
  try {
    await work();
  } catch (error) {
    setStatus(card, 'failed');
    showError(card, error.message);
  } finally {
    stop();
    refreshCredits();
  }
}
