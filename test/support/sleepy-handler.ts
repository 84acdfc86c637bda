import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** A function that takes `ms` to run, then writes `file` if given, and answers (the inference pool's tests). */
export const handler = async (event: { ms: number; file?: string }) => {
  await sleep(event.ms);
  if (event.file) writeFileSync(event.file, 'written after the sleep');
  return { slept: event.ms };
};

/** A function's invoke that waits `queuedMs` for an instance, then runs for `runMs` (local/stepfunctions.ts tests). */
export async function queuedRun(started: () => void, queuedMs: number, runMs: number): Promise<string> {
  await sleep(queuedMs);
  started();
  await sleep(runMs);
  return 'ran';
}
