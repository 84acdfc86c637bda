/**
 * The one price table of the cost model: AWS list prices, on-demand, first tier, no free tier. Written from
 * AWS's public pricing pages as of the date below; this machine has no network, so they were not fetched
 * by code. Check them against the pricing pages of your region before relying on a figure.
 * A GB here is 2^30 bytes, as AWS bills storage, transfer and memory.
 */
export const PRICES = {
  date: '2026-11-28',
  region: 'us-east-1',
  stepFunctions: {
    /** Standard workflows: per state transition. */
    standardTransition: 0.025 / 1000,
    /** Express workflows: per execution. */
    expressRequest: 1.0 / 1e6,
    /** Express workflows: per GB-second of the first tier (first 1,000 GB-hours a month). */
    expressGbSecond: 0.00001667,
    /** Express duration is billed in 100 ms steps... */
    expressBilledMs: 100,
    /** ...and memory in 64 MB chunks. */
    expressMemoryChunkMb: 64,
  },
  lambda: {
    request: 0.2 / 1e6,
    /** Per GB-second, billed per 1 ms; first tier: 7.5 billion GB-seconds a month on arm64, 6 on x86. */
    gbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
  },
  apiGateway: {
    /** HTTP APIs, first 300 million requests a month. */
    httpRequest: 1.0 / 1e6,
    /** A request is metered in steps of this many bytes: 1.2 MB counts as three. */
    httpMeteredBytes: 512 * 1024,
  },
  dynamodb: {
    /** On-demand. One WRU writes 1 KB (a transactional write takes two); one RRU reads 4 KB consistently. */
    writeUnit: 0.625 / 1e6,
    readUnit: 0.125 / 1e6,
  },
  s3: {
    /** S3 Standard, first 50 TB a month. */
    gbMonth: 0.023,
    /** PUT, COPY, POST and LIST requests. */
    tier1Request: 0.005 / 1000,
    /** GET, HEAD and every other request but DELETE and the abort of a multipart upload, which are free. */
    tier2Request: 0.0004 / 1000,
  },
  /** Data transfer out to the internet, first 10 TB a month (the first 100 GB a month are free). */
  dataOutGb: 0.09,
  /** X-Ray: per trace recorded (the first 100,000 a month are free). */
  xrayTrace: 5.0 / 1e6,
  /** CloudWatch Logs: per GB ingested, Standard class; vended logs (Step Functions, API access) the same. */
  logsIngestedGb: 0.5,
  eventBridge: {
    /** Custom events put on a bus, per 64 KB chunk of each entry. */
    event: 1.0 / 1e6,
    chunkBytes: 64 * 1024,
  },
} as const;

export type Prices = typeof PRICES;
