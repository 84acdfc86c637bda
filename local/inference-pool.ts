import { availableParallelism, totalmem } from 'node:os';
import { Worker } from 'node:worker_threads';
import { errorNames } from '#core/error-names.ts';
import { functionTimedOut } from './lambda-runtime.ts';

interface Run {
  id: number;
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

interface PoolWorker {
  worker: Worker;
  run: Run | null;
}

/** What one worker holds once every model is loaded (measured: about 1.2 GB), with room to spare. */
const MEMORY_PER_WORKER = 2 * 1024 ** 3;

/**
 * The default concurrency: one worker per four cores, since each run already spreads its model passes over
 * every core (INFERENCE_THREADS 0) and a second worker mostly overlaps the decoding and encoding; no more
 * than the memory holds with 2 GB left to the rest; at least one. 2 or 4 cores: 1; 8 cores and 16 GB: 2.
 */
export function defaultInferenceWorkers(cores = availableParallelism(), memory = totalmem()): number {
  const byMemory = Math.floor((memory - MEMORY_PER_WORKER) / MEMORY_PER_WORKER);
  return Math.max(1, Math.min(Math.floor(cores / 4), byMemory));
}

const named = (name: string, message: string) => Object.assign(new Error(message), { name });
const shuttingDown = () => named(errorNames.TransientError, 'The local stack is shutting down');

/**
 * Runs the container-image function's handler in worker threads, as Lambda runs it in instances of its
 * own, so that model inference never blocks the API's event loop.
 * - Past `size` runs, an invoke waits for a worker. In AWS it would be refused (TooManyRequestsException)
 *   and the task's throttle retrier would wait and try again, its clock stopped meanwhile; here `onStart`
 *   tells the caller when the run starts, and the local Step Functions count the task's time from then.
 *   The same outcome without a backoff that would leave the only worker idle (docs/aws-parity.md).
 * - A run that outlives the function's timeout is stopped, as Lambda stops it: its worker thread is
 *   terminated, so nothing it would write afterwards lands, and the invoke fails as Lambda.Unknown,
 *   "Task timed out after … seconds".
 * - `close` stops at once, whatever runs or waits.
 */
export function inferencePool(options: {
  size: number;
  repoRoot: string;
  handler: string;
  functionName: string;
  timeoutSeconds: number;
  /** The function's environment: its workers' `process.env`, as an instance's in Lambda (read at each spawn). */
  environment?: () => Record<string, string>;
}) {
  const workers: PoolWorker[] = [];
  const waiting: Array<{
    payload: unknown;
    onStart?: () => void;
    resolve(value: unknown): void;
    reject(error: Error): void;
  }> = [];
  let nextId = 0;
  let closed = false;

  const spawn = (): PoolWorker => {
    const worker = new Worker(new URL('./inference-worker.mjs', import.meta.url), {
      workerData: {
        repoRoot: options.repoRoot,
        handler: options.handler,
        functionName: options.functionName,
        timeoutSeconds: options.timeoutSeconds,
      },
      ...(options.environment ? { env: options.environment() } : {}),
    });
    const entry: PoolWorker = { worker, run: null };
    const finish = (id: number, outcome: (run: Run) => void) => {
      const run = entry.run;
      if (!run || run.id !== id) return;
      clearTimeout(run.timer);
      entry.run = null;
      outcome(run);
      pump();
    };
    worker.on(
      'message',
      (message: { id: number; result?: unknown; error?: { name: string; message: string } }) => {
        finish(message.id, (run) =>
          message.error
            ? run.reject(named(message.error.name, message.error.message))
            : run.resolve(message.result),
        );
      },
    );
    worker.on('error', (error) => {
      console.error('[inference] worker crashed:', error);
      retire(entry);
      const run = entry.run;
      if (run)
        finish(run.id, (r) => r.reject(named(errorNames.TransientError, 'The inference worker crashed')));
      else pump();
    });
    workers.push(entry);
    return entry;
  };

  const retire = (entry: PoolWorker) => {
    const at = workers.indexOf(entry);
    if (at >= 0) workers.splice(at, 1);
  };
  /** Threads being ended (runs past the timeout): `close` waits for them too. */
  const ending = new Set<Promise<number>>();

  const pump = () => {
    while (waiting.length > 0 && !closed) {
      const entry =
        workers.find((candidate) => !candidate.run) ?? (workers.length < options.size ? spawn() : undefined);
      if (!entry) return;
      const { payload, onStart, resolve, reject } = waiting.shift()!;
      const id = nextId++;
      const timer = setTimeout(() => {
        // Lambda ends the instance's run at the function's timeout; here its thread ends with it.
        if (entry.run?.id !== id) return;
        entry.run = null;
        retire(entry);
        const ended = entry.worker.terminate();
        ending.add(ended);
        void ended.finally(() => ending.delete(ended));
        reject(functionTimedOut(options.timeoutSeconds));
        pump();
      }, options.timeoutSeconds * 1000);
      entry.run = { id, resolve, reject, timer };
      onStart?.();
      entry.worker.postMessage({ id, payload });
    }
  };

  return {
    /** One run of the function; `onStart` is called when a worker takes it. */
    invoke(payload: unknown, onStart?: () => void): Promise<unknown> {
      return new Promise((resolve, reject) => {
        if (closed) return reject(shuttingDown());
        waiting.push({ payload, ...(onStart ? { onStart } : {}), resolve, reject });
        pump();
      });
    },
    /**
     * Stops at once, whatever runs or waits: the runs are abandoned, as a process that dies abandons them,
     * and the executions that wanted them resume after a restart (the stack stops them first, unrecorded).
     */
    async close() {
      closed = true;
      for (const { reject } of waiting.splice(0)) reject(shuttingDown());
      const stopping = workers.splice(0);
      for (const entry of stopping) {
        const run = entry.run;
        entry.run = null;
        if (run) {
          clearTimeout(run.timer);
          run.reject(shuttingDown());
        }
      }
      await Promise.all([...stopping.map((entry) => entry.worker.terminate()), ...ending]);
    },
  };
}
