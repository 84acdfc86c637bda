import { Worker } from 'node:worker_threads';
import { errorNames } from '#core/error-names.ts';

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface PoolWorker {
  worker: Worker;
  busy: boolean;
}

/**
 * Runs the container-image function's handler in worker threads, as separate Lambda containers
 * would, so that model inference never blocks the API's event loop.
 */
export function inferencePool(options: {
  size: number;
  repoRoot: string;
  handler: string;
  functionName: string;
}) {
  const workers: PoolWorker[] = [];
  const queue: Array<{ payload: unknown; pending: Pending }> = [];
  const inFlight = new Map<number, Pending>();
  let nextId = 0;

  const spawn = (): PoolWorker => {
    const worker = new Worker(new URL('./inference-worker.mjs', import.meta.url), {
      workerData: {
        repoRoot: options.repoRoot,
        handler: options.handler,
        functionName: options.functionName,
      },
    });
    const entry: PoolWorker = { worker, busy: false };
    worker.on(
      'message',
      (message: { id: number; result?: unknown; error?: { name: string; message: string } }) => {
        const pending = inFlight.get(message.id);
        inFlight.delete(message.id);
        entry.busy = false;
        if (message.error) {
          const error = new Error(message.error.message);
          error.name = message.error.name;
          pending?.reject(error);
        } else {
          pending?.resolve(message.result);
        }
        pump();
      },
    );
    worker.on('error', (error) => {
      console.error('[inference] worker crashed:', error);
      workers.splice(workers.indexOf(entry), 1);
      for (const [id, pending] of inFlight) {
        pending.reject(
          Object.assign(new Error('The inference worker crashed'), { name: errorNames.TransientError }),
        );
        inFlight.delete(id);
      }
      pump();
    });
    workers.push(entry);
    return entry;
  };

  const pump = () => {
    while (queue.length > 0) {
      const idle =
        workers.find((entry) => !entry.busy) ?? (workers.length < options.size ? spawn() : undefined);
      if (!idle) return;
      const { payload, pending } = queue.shift()!;
      const id = nextId++;
      idle.busy = true;
      inFlight.set(id, pending);
      idle.worker.postMessage({ id, payload });
    }
  };

  return {
    invoke(payload: unknown): Promise<unknown> {
      return new Promise((resolve, reject) => {
        queue.push({ payload, pending: { resolve, reject } });
        pump();
      });
    },
    async close() {
      await Promise.all(workers.map((entry) => entry.worker.terminate()));
      workers.length = 0;
    },
  };
}
