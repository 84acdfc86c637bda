import * as z from 'zod';
import { builtOnFirstUse } from '#core/built-on-first-use.ts';
import { DEFAULT_GUEST_RATE, DEFAULT_KEY_RATE } from '#core/limits/rate.ts';
import { MAX_ARCHIVE_BYTES, MAX_PHOTO_BYTES, MAX_SOURCE_BYTES } from '#core/limits/sources.ts';
import { WEBHOOK_TIMEOUT_MS } from '#core/webhooks/delivery.ts';

/**
 * Built at the first `config()`, not at import: its forty zod schemas cost every API function's cold start
 * 10-25 ms of CPU before its handler could run (`npm run bench -- coldstart`), and no import needs them.
 */
function buildConfigSchema() {
  // An empty value (`X= npm start`) reads as unset, as a shell user means it.
  const flag = z
    .preprocess(
      (value) => (value === '' ? undefined : value),
      z.enum(['true', 'false', '1', '0']).default('false'),
    )
    .transform((value) => value === 'true' || value === '1');
  const optionalUrl = z.string().url().optional();
  return z.object({
    /** Set only for the functions whose role reaches the table or the bucket (the inference one has no table). */
    TABLE_NAME: z.string().min(1).optional(),
    BUCKET_NAME: z.string().min(1).optional(),
    STATE_MACHINE_ARN: z.string().min(1).optional(),
    /** The archive workflow: unpacks batch archives and builds their downloads. */
    ARCHIVE_STATE_MACHINE_ARN: z.string().min(1).optional(),
    /** The job runs' Standard follow-ups (webhook retries, late settlement): the sweeper hands its failures to it. */
    FOLLOW_UP_STATE_MACHINE_ARN: z.string().min(1).optional(),
    /**
     * Lambda sets it; elsewhere (the keys CLI against a deployment) unset leaves the region to the SDK's own
     * chain (the profile's region in ~/.aws/config, AWS_PROFILE), as every AWS tool does. A default here would win
     * over that chain and send the CLI to another region's table.
     */
    AWS_REGION: z.string().min(1).optional(),
    /** Endpoints of stand-in services (the embedded local stack); unset in AWS. */
    DYNAMODB_ENDPOINT: optionalUrl,
    S3_ENDPOINT: optionalUrl,
    SFN_ENDPOINT: optionalUrl,
    EVENTBRIDGE_ENDPOINT: optionalUrl,
    /** The bus that job events go to; set for the function that publishes them. */
    EVENT_BUS_NAME: z.string().min(1).optional(),
    /** sha256 (hex) of the master key; the key itself never sits in configuration. */
    MASTER_KEY_SHA256: z
      .union([z.literal(''), z.string().regex(/^[0-9a-f]{64}$/)])
      .optional()
      .transform((value) => value || undefined),
    /** Where the master key itself is kept, read and hashed at cold start (layers/aws/master-key.ts). */
    MASTER_KEY_SECRET_ARN: z.string().min(1).optional(),
    MASTER_KEY_PARAMETER_NAME: z.string().min(1).optional(),
    MODELS_DIR: z.string().optional(),
    /** Largest accepted source or background image, in bytes. */
    MAX_SOURCE_BYTES: z.coerce.number().int().positive().default(MAX_SOURCE_BYTES),
    /** Local tests only: lets `url` sources and webhooks reach 127.0.0.1/::1. Never set in production. */
    OUTBOUND_ALLOW_LOOPBACK: flag,
    OUTBOUND_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
    /** One webhook attempt (connect, send, first byte of the answer) gives up after this long. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(WEBHOOK_TIMEOUT_MS),
    INFERENCE_THREADS: z.coerce.number().int().min(0).default(0),
    /** Spec 5.2: keys in the query string and the legacy `api_key` form field are off unless enabled. */
    ALLOW_KEY_IN_QUERY: flag,
    ALLOW_KEY_IN_FORM: flag,
    GUEST_TRIAL_CREDITS: z.coerce.number().int().min(0).default(10),
    GUEST_SESSIONS_PER_ADDRESS_PER_DAY: z.coerce.number().int().min(1).default(20),
    /**
     * Requests a second and bursts per API key, and per address of requests without one (guests), counted in
     * the table by every API function (layers/core/use-cases/admit-request.ts); over them is 429.
     */
    RATE_LIMIT_KEY_PER_SECOND: z.coerce.number().positive().default(DEFAULT_KEY_RATE.perSecond),
    RATE_LIMIT_KEY_BURST: z.coerce.number().int().min(1).default(DEFAULT_KEY_RATE.burst),
    RATE_LIMIT_GUEST_PER_SECOND: z.coerce.number().positive().default(DEFAULT_GUEST_RATE.perSecond),
    RATE_LIMIT_GUEST_BURST: z.coerce.number().int().min(1).default(DEFAULT_GUEST_RATE.burst),
    /** Jobs one account may have queued or processing at once; more is 429. */
    MAX_JOBS_IN_FLIGHT: z.coerce.number().int().min(1).default(20),
    /** Largest photo sent by direct upload (POST /uploads), and largest photo inside a batch archive. */
    MAX_PHOTO_BYTES: z.coerce.number().int().positive().default(MAX_PHOTO_BYTES),
    /** Largest batch archive sent by direct upload. */
    MAX_ARCHIVE_BYTES: z.coerce.number().int().positive().default(MAX_ARCHIVE_BYTES),
    /** Items of one batch that run at once (each one job, counted in MAX_JOBS_IN_FLIGHT). */
    BATCH_CONCURRENCY: z.coerce.number().int().min(1).max(20).default(4),
    /**
     * `json`: one JSON object a line, as CloudWatch reads it (Lambda). `text`: one line a person reads, with
     * the job id; `npm start` picks it on a terminal.
     */
    LOG_FORMAT: z.enum(['json', 'text']).default('json'),
    /**
     * X-Ray traces of this function, set by the construct from PhotoJobsProps.tracing (Powertools reads the
     * same variable). Unset is off, unlike Powertools' own default: the tracer is then never imported.
     */
    POWERTOOLS_TRACE_ENABLED: flag,
  });
}

/** Built at the first `config()`, not at every cold start of a function that imports this module. */
const configSchema = builtOnFirstUse(buildConfigSchema);

export type Config = z.infer<ReturnType<typeof buildConfigSchema>>;

/**
 * The settings a deployment may tune, each with a default (README, "Tunables with defaults"). The construct
 * sets none of them; locally every function takes them from `npm start`'s environment. The others name what
 * the deployment wires (its table, bucket, workflows, bus, master key, region, the stand-ins' endpoints).
 */
export const TUNABLE_SETTINGS = [
  'MAX_SOURCE_BYTES',
  'MAX_PHOTO_BYTES',
  'MAX_ARCHIVE_BYTES',
  'MAX_JOBS_IN_FLIGHT',
  'BATCH_CONCURRENCY',
  'GUEST_TRIAL_CREDITS',
  'GUEST_SESSIONS_PER_ADDRESS_PER_DAY',
  'RATE_LIMIT_KEY_PER_SECOND',
  'RATE_LIMIT_KEY_BURST',
  'RATE_LIMIT_GUEST_PER_SECOND',
  'RATE_LIMIT_GUEST_BURST',
  'ALLOW_KEY_IN_QUERY',
  'ALLOW_KEY_IN_FORM',
  'OUTBOUND_TIMEOUT_MS',
  'WEBHOOK_TIMEOUT_MS',
  'INFERENCE_THREADS',
  'LOG_FORMAT',
  'OUTBOUND_ALLOW_LOOPBACK',
] as const satisfies ReadonlyArray<keyof Config>;

/**
 * By environment object: in Lambda there is one (one function, one process), so this parses once per cold
 * start. Where one process runs several functions, each with its own environment (the local stack), each
 * gets its own configuration, parsed once.
 */
const parsed = new WeakMap<object, Config>();

/** Parsed once per environment; a misconfigured function fails at cold start with the names of the bad variables. */
export function config(): Config {
  const env = process.env;
  let cfg = parsed.get(env);
  if (!cfg) {
    cfg = parseConfig(env);
    parsed.set(env, cfg);
  }
  return cfg;
}

/**
 * What `build` makes from the configuration, made once per configuration: once per cold start in Lambda, and
 * once per function where one process runs several, so that no function uses another's clients or settings.
 */
export function oncePerConfig<T>(build: (cfg: Config) => T): () => T {
  const built = new WeakMap<Config, T>();
  return () => {
    const cfg = config();
    if (!built.has(cfg)) built.set(cfg, build(cfg));
    return built.get(cfg)!;
  };
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = configSchema().safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}
