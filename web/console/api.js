// The console's one way to the API: same origin, the key typed in the page, the spec's errors as Errors.
export const API = `${location.origin}/api/v1`;
const KEY_STORAGE = 'photo-jobs.api-key';
export const keyInput = document.querySelector('#api-key');

keyInput.value = sessionStorage.getItem(KEY_STORAGE) ?? '';
// Remembered as it is typed (a tab closed before the field loses focus keeps it), and when it is left.
const remember = () => sessionStorage.setItem(KEY_STORAGE, keyInput.value.trim());
keyInput.addEventListener('input', remember);
keyInput.addEventListener('change', remember);

export const apiKey = () => keyInput.value.trim();
export const authHeaders = () => (apiKey() ? { 'X-API-Key': apiKey() } : {});

/** A request to the API; a non-2xx answer becomes an Error carrying the spec's `message` and `code`. */
export async function api(path, init = {}) {
  const response = await fetch(`${API}${path}`, {
    ...init,
    credentials: 'same-origin',
    headers: { ...authHeaders(), ...init.headers },
  });
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = new Error(body?.message ?? `${response.status} ${response.statusText}`);
    error.status = response.status;
    error.code = body?.code ?? response.status;
    throw error;
  }
  return { status: response.status, body, headers: response.headers };
}
