import { parentPort, workerData } from 'node:worker_threads';
import { lambdaContext, loadHandler } from './lambda-runtime.ts';

const { repoRoot, handler, functionName, timeoutSeconds } = workerData as {
  repoRoot: string;
  handler: string;
  /** The function's logical id: as in the main thread, its access key id when it calls the stand-ins. */
  functionName: string;
  /** The function's timeout, from the template (the pool ends a run that outlives it). */
  timeoutSeconds: number;
};

parentPort!.on('message', async ({ id, payload }: { id: number; payload: unknown }) => {
  try {
    const invoke = await loadHandler(repoRoot, handler);
    const result = await invoke(payload, lambdaContext(functionName, timeoutSeconds));
    parentPort!.postMessage({ id, result });
  } catch (error) {
    const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
    parentPort!.postMessage({ id, error: { name, message } });
  }
});
