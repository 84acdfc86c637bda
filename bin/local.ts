/** `npm start`: the whole API on localhost over the embedded stack. */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { hashSecret, keyIdOf } from '#core/keys/api-key.ts';
import { createApiKey } from '#core/use-cases/create-api-key.ts';
import { signingSecrets } from '#core/webhooks/signature.ts';
import { FETCH_COMMAND, fetchModels, modelStatuses, modelsCacheDir, SERVICE_MODELS } from '#models/fetch.ts';
import { fetchProgress } from '#models/fetch-progress.ts';
import { movableProcessClock } from '../local/clock.ts';
import { listenProblem, planListen } from '../local/listen.ts';
import { persistentSecret } from '../local/secrets.ts';
import { startLocalStack } from '../local/stack.ts';

// The AWS SDK warns at every start under Node 20 that its releases after January 2027 will need Node 22.
// The SDK version is pinned and Lambda runs Node 22; Node 20 stays supported locally until then, as the
// README says once (Requirements), so the warning is not repeated at every command.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// One client's bad request, or a bug reached by it, must not take every other client's jobs down: what
// escapes a handler is logged and the server goes on (each request already ends in its own answer).
process.on('uncaughtException', (error) => {
  console.error(JSON.stringify({ level: 'error', event: 'uncaughtException', error: describe(error) }));
});
process.on('unhandledRejection', (reason) => {
  console.error(JSON.stringify({ level: 'error', event: 'unhandledRejection', error: describe(reason) }));
});

function describe(error: unknown) {
  return error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack }
    : { error };
}

const port = Number(process.env.PORT ?? 3000);
const listen = planListen(process.env);
// Read by the handlers' configuration (layers/config.ts), as every other setting.
process.env.OUTBOUND_ALLOW_LOOPBACK = String(listen.allowLoopback);
const dataDir = path.resolve(process.env.DATA_DIR ?? '.data');
const masterKey = process.env.MASTER_KEY || (await persistentSecret(dataDir, 'master-key', 'pjm_'));

// A fresh clone has no model files: fetch (or derive, or join) what is missing before serving, unless told
// not to. A model that cannot be had does not stop the server: the banner names it, and the jobs that need
// it fail with ModelUnavailableError; nothing is ever answered without the real model.
const modelsDir = modelsCacheDir(process.env.MODELS_DIR);
if (process.env.MODELS_OFFLINE !== 'true') {
  await fetchModels({
    cacheDir: modelsDir,
    baseUrl: process.env.MODELS_BASE_URL || undefined,
    progress: fetchProgress(),
  }).catch(() => undefined);
}
const missingModels = (await modelStatuses(modelsDir, SERVICE_MODELS)).filter((status) => !status.file);

// LOCAL_CLOCK=ipc: the process that started this one (a test, test/integration/support/local-server.ts) moves
// the stack's clock forward over the IPC channel it opened, to see days pass without waiting them.
const clock = process.env.LOCAL_CLOCK === 'ipc' && process.send ? movableProcessClock() : undefined;
if (clock) {
  process.on('message', (message: { advanceClockMs?: unknown }) => {
    if (typeof message?.advanceClockMs !== 'number') return;
    process.send?.({ clock: clock.advance(message.advanceClockMs).toISOString() });
  });
}

const stack = await startLocalStack({
  port,
  clock,
  host: listen.host,
  dataDir,
  masterKeySha256: hashSecret(masterKey),
  inferenceWorkers: process.env.INFERENCE_WORKERS ? Number(process.env.INFERENCE_WORKERS) : undefined,
  // Retry waits are scaled down locally (the webhook schedule takes seconds, not hours); tests use 0.
  retryIntervalScale: process.env.SFN_RETRY_INTERVAL_SCALE
    ? Number(process.env.SFN_RETRY_INTERVAL_SCALE)
    : undefined,
  eventsLogFile: process.env.EVENTS_LOG_FILE || undefined,
  // Every task of a job run twice, as Express's at-least-once allows: the tests of the steps' effects.
  repeatExpressTasks: process.env.LOCAL_SFN_REPEAT_EXPRESS_TASKS === 'true',
  // DynamoDB cancels overlapping transactions with TransactionConflict; locally that share of them is.
  transactionConflicts: Number(process.env.LOCAL_DYNAMODB_TRANSACTION_CONFLICTS ?? 0),
  // PHOTO_JOBS_BUNDLED=1 runs the esbuild bundles that would be deployed instead of the sources.
  bundled: ['1', 'true'].includes(process.env.PHOTO_JOBS_BUNDLED ?? ''),
  // A cloud assembly of these sources synthesized without bundling, read instead of synthesizing again.
  assemblyDir: process.env.LOCAL_ASSEMBLY_DIR || undefined,
  // Another module for the image function's handler (tests whose subject is not vision run one without models).
  inferenceHandler: process.env.LOCAL_INFERENCE_HANDLER || undefined,
}).catch((error: unknown) => {
  const problem = listenProblem(error, port, listen.host);
  if (!problem) throw error;
  console.error(problem);
  process.exit(1);
});

// Imported only now: the stack has just written the configuration these modules read.
const { deps } = await import('#wiring/api.ts');
const demoKeyFile = path.join(dataDir, 'demo-key');
let demoKey = (await readFile(demoKeyFile, 'utf8').catch(() => '')).trim();
if (!demoKey || !(await deps().keys.findById(keyIdOf(hashSecret(demoKey))))) {
  demoKey = (await createApiKey(deps(), { credits: 100, name: 'demo' })).key;
  await writeFile(demoKeyFile, `${demoKey}\n`, { mode: 0o600 });
}
const balance = await deps().accounts.get(keyIdOf(hashSecret(demoKey)));
const [webhookSecret] = signingSecrets(
  (await deps().webhookSecrets.get(keyIdOf(hashSecret(demoKey)))).secrets,
  new Date(),
);

const origin = new URL(stack.baseUrl).origin;
const modelsLine =
  missingModels.length === 0
    ? `all ${SERVICE_MODELS.length} verified (${modelsDir})`
    : `MISSING ${missingModels.map(({ model }) => `${model.id} (${model.file})`).join(', ')}: jobs that ` +
      `need them fail until you run \`${FETCH_COMMAND}\` (MODELS_BASE_URL=<mirror> for a mirror)`;
console.log(`photo-jobs is running on the embedded stack

  console    ${origin}/   (open it, paste the API key below, drop a photo)
  reference  ${origin}/docs
  API        ${stack.baseUrl}
  master key ${masterKey}
  API key    ${demoKey}  (${balance?.available ?? 0} credits)
  webhooks   signed with ${webhookSecret ?? '(no secret: npm run cli -- keys rotate-webhook-secret <key>)'}
  data       ${dataDir}
  models     ${modelsLine}
  events     ${stack.eventsLogFile}
${listen.notes.map((note) => `  ${note}`).join('\n')}

Try:
  curl -s -H "X-API-Key: ${demoKey}" -F mode=plate -F file=@photo.jpg ${stack.baseUrl}/jobs
`);

const shutdown = async () => {
  await stack.close();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
