import cliProgress from 'cli-progress';
import type { FetchProgress } from './fetch.ts';

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * A bar per file (bytes, rate, ETA) on a terminal; in CI or when piped, one line when a file starts and one
 * when it ends, so long work never runs silent and logs stay readable.
 */
export function fetchProgress(stream: NodeJS.WriteStream = process.stderr): FetchProgress {
  const tty = Boolean(stream.isTTY) && !process.env.CI;
  const bars = tty
    ? new cliProgress.MultiBar(
        {
          stream,
          format: '{model} [{bar}] {percentage}% {done}/{size} {speed} ETA {eta_formatted}',
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : null;
  const active = new Map<string, { bar: cliProgress.SingleBar | null; received: number; started: number }>();
  const line = (text: string) => (bars ? bars.log(`${text}\n`) : stream.write(`${text}\n`));
  const payload = (id: string, received: number, started: number, total: number) => ({
    model: id.padEnd(16),
    done: megabytes(received),
    size: megabytes(total),
    speed: `${megabytes(received / Math.max((Date.now() - started) / 1000, 0.001))}/s`,
  });
  return {
    start(model, url, bytes) {
      const total = bytes ?? 0;
      const started = Date.now();
      const bar = bars?.create(total, 0, payload(model.id, 0, started, total)) ?? null;
      active.set(model.id, { bar, received: 0, started });
      if (!bar) line(`models: fetching ${model.id} (${megabytes(total)}) from ${url}`);
    },
    advance(model, bytes) {
      const entry = active.get(model.id);
      if (!entry) return;
      entry.received += bytes;
      entry.bar?.update(entry.received, payload(model.id, entry.received, entry.started, model.bytes ?? 0));
    },
    finish(model, outcome, file) {
      const entry = active.get(model.id);
      entry?.bar?.stop();
      active.delete(model.id);
      const seconds = entry ? ` in ${((Date.now() - entry.started) / 1000).toFixed(1)} s` : '';
      line(`models: ${model.id} ${outcome === 'present' ? 'present' : outcome}${seconds}: ${file}`);
      if (active.size === 0) bars?.stop();
    },
    fail(model, error) {
      active.get(model.id)?.bar?.stop();
      active.delete(model.id);
      line(`models: ${model.id} FAILED: ${error.message}`);
      if (active.size === 0) bars?.stop();
    },
  };
}
