// The caller's credit balance, shown above the form and read again after each job or batch.
import { api } from './api.js';

const credits = document.querySelector('#credits');

export async function refreshCredits() {
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
