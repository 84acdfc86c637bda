/**
 * `npm run cli -- <command>`: `keys …` manages keys against the same data as `npm start` (same DATA_DIR):
 * while the server runs the CLI talks to its DynamoDB endpoint, otherwise it opens the data itself. With
 * `--table` and `--bucket` it manages the keys of a deployment instead, through the AWS credentials and
 * region of the environment (the same adapters the deployed functions use).
 * `jobs …` and `batches …` are clients of a running service over HTTP (client/cli.ts).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BACKGROUND_PRESETS, type BackgroundPreset } from '#core/jobs/job.ts';
import { normalizePlateColor, parseBooleanish } from '#core/jobs/params.ts';
import { hashSecret, type KeyDefaults, keyIdOf } from '#core/keys/api-key.ts';
import { createApiKey } from '#core/use-cases/create-api-key.ts';
import { setKeyBackground } from '#core/use-cases/key-background.ts';
import { rotateWebhookSecret } from '#core/use-cases/rotate-webhook-secret.ts';

const USAGE = `Usage:
  npm run cli -- keys create [--credits N] [--name NAME] [defaults…] [--json]
  npm run cli -- keys defaults <API_KEY> [defaults…] [--json]
  npm run cli -- keys show <API_KEY> [--json]
  npm run cli -- keys rotate-webhook-secret <API_KEY> [--json]
  add --table NAME --bucket NAME (PhotoJobsData's TableName and BucketName outputs) to manage the keys of a
  deployment with the AWS credentials and region of the environment, instead of the local data
  npm run cli -- jobs create|get …, batches create|get …   (npm run cli -- jobs --help)

defaults: --background studio|warm|graphite|showroom  --plate-color '#RRGGBB'|black|white|graphite
          --plate-smoothing true|false|smooth|raw  --plate-mask-only true|false  --webhook URL ('' clears)
          --background-file PATH (a JPG, PNG or WEBP used by studio_background; '' clears)`;

// The AWS SDK warns at every start under Node 20 that its releases after January 2027 will need Node 22.
// The SDK version is pinned and Lambda runs Node 22; Node 20 stays supported locally until then, as the
// README says once (Requirements), so the warning is not repeated at every command.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

if (process.argv[2] === 'jobs' || process.argv[2] === 'batches') {
  const { runClientCli } = await import('../client/cli.ts');
  process.exit(await runClientCli(process.argv.slice(2)));
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    credits: { type: 'string', default: '100' },
    name: { type: 'string' },
    background: { type: 'string' },
    'plate-color': { type: 'string' },
    'plate-smoothing': { type: 'string' },
    'plate-mask-only': { type: 'string' },
    'background-file': { type: 'string' },
    webhook: { type: 'string' },
    table: { type: 'string' },
    bucket: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function defaultsFromFlags(): KeyDefaults {
  const defaults: KeyDefaults = {};
  if (values.background !== undefined) {
    if (!BACKGROUND_PRESETS.includes(values.background as BackgroundPreset)) fail('unknown --background');
    defaults.background = values.background as BackgroundPreset;
  }
  if (values['plate-color'] !== undefined) defaults.plateColor = normalizePlateColor(values['plate-color']);
  if (values['plate-smoothing'] !== undefined) {
    defaults.plateSmoothing = parseBooleanish('plate-smoothing', values['plate-smoothing']);
  }
  if (values['plate-mask-only'] !== undefined) {
    defaults.plateMaskOnly = parseBooleanish('plate-mask-only', values['plate-mask-only']);
  }
  if (values.webhook !== undefined)
    defaults.webhookUrl = values.webhook === '' ? null : new URL(values.webhook).toString();
  return defaults;
}

const [group, command, argument] = positionals;
if (values.help || group !== 'keys' || !command)
  fail(group ? `unknown command: ${positionals.join(' ')}` : '');

if ((values.table === undefined) !== (values.bucket === undefined))
  fail('--table and --bucket go together: both name the deployment, or neither (the local data)');
const deployed = values.table !== undefined && values.bucket !== undefined;
if (deployed) Object.assign(process.env, { TABLE_NAME: values.table, BUCKET_NAME: values.bucket });
const data = deployed
  ? { close: async () => undefined, description: `in table ${values.table} (the deployment's)` }
  : await (await import('../local/data.ts')).openLocalData(path.resolve(process.env.DATA_DIR ?? '.data'));
try {
  const { deps } = await import('#wiring/api.ts');
  const d = deps();
  const applyBackgroundFile = async (keyId: string) => {
    const file = values['background-file'];
    if (file === undefined) return;
    await setKeyBackground(d, keyId, file === '' ? null : await readFile(path.resolve(file)));
  };
  const print = (result: Record<string, unknown>, text: string) =>
    console.log(values.json ? JSON.stringify(result) : text);

  if (command === 'create') {
    const credits = Number(values.credits);
    const created = await createApiKey(d, {
      credits,
      name: values.name ?? null,
      defaults: defaultsFromFlags(),
    });
    await applyBackgroundFile(created.keyId);
    print(
      {
        key: created.key,
        key_id: created.keyId,
        credits: created.credits,
        webhook_secret: created.webhookSecret,
      },
      `API key ${created.key} (${created.keyId}) with ${created.credits} credits\n` +
        `webhook signing secret ${created.webhookSecret} (shown once; see docs/webhooks.md)\n` +
        `stored ${data.description}`,
    );
  } else if (command === 'defaults' || command === 'show') {
    if (!argument) fail('give the API key');
    const keyId = keyIdOf(hashSecret(argument));
    const record = await d.keys.findById(keyId);
    if (!record) fail(`no such key: ${keyId}`);
    const defaults =
      command === 'defaults' ? { ...record.defaults, ...defaultsFromFlags() } : record.defaults;
    if (command === 'defaults') {
      await d.keys.updateDefaults(keyId, defaults);
      await applyBackgroundFile(keyId);
    }
    const current = (await d.keys.findById(keyId))?.defaults ?? defaults;
    const account = await d.accounts.get(keyId);
    print(
      { key_id: keyId, credits: account?.available ?? 0, defaults: current },
      `${keyId}: ${account?.available ?? 0} credits, defaults ${JSON.stringify(current)}`,
    );
  } else if (command === 'rotate-webhook-secret') {
    if (!argument) fail('give the API key');
    const keyId = keyIdOf(hashSecret(argument));
    if (!(await d.keys.findById(keyId))) fail(`no such key: ${keyId}`);
    const rotated = await rotateWebhookSecret(d, keyId);
    print(
      {
        key_id: rotated.keyId,
        webhook_secret: rotated.webhookSecret,
        previous_expires_at: rotated.previousExpiresAt,
      },
      `${rotated.keyId}: new webhook signing secret ${rotated.webhookSecret} (shown once)` +
        (rotated.previousExpiresAt ? `; the previous one also signs until ${rotated.previousExpiresAt}` : ''),
    );
  } else {
    fail(`unknown command: keys ${command}`);
  }
} finally {
  await data.close();
}
