/**
 * What the cost model assumes where neither the template, the trace nor the bench measures it. Each is an
 * estimate, not a measurement in AWS; the table says which rows they feed.
 */
export const ESTIMATES = {
  /**
   * Share of requests X-Ray records. Every one, as the count assumed: an upper bound. Under the
   * default sampling rule (the first request each second, then 5%) a steady load well above one request a
   * second records about 5%, which would take the X-Ray row to a twentieth.
   */
  xraySampledShare: 1,
  /**
   * Lambda's own lines per invocation in the function's log group (START, END, REPORT with its X-Ray
   * line): about 400 bytes in text format, by the length of those lines.
   */
  lambdaPlatformLogBytes: 400,
  /** One Step Functions history event in the execution log without its data: about 350 bytes of JSON. */
  stepFunctionsLogEventBytes: 350,
  /**
   * Express workflows bill the memory an execution uses, in 64 MB chunks; a job's (a few KB of state) is
   * taken as one chunk.
   */
  expressMemoryMb: 64,
  /**
   * An object lives past its lifecycle expiry until the next midnight UTC (S3 rounds the expiry up to it):
   * half a day on average.
   */
  expiryRoundingDays: 0.5,
  /**
   * Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB (AWS Lambda, "Configure
   * function memory"). The bench's run times are taken as work spread over the bench host's two CPUs
   * (onnxruntime and libvips use both), so at m MB a run takes p50 x 2 / min(2, m / 1,769): longer below
   * 3,538 MB, no shorter above. An assumption: it holds where the work is CPU-bound and parallel.
   */
  lambdaMbPerVcpu: 1769,
  benchVcpus: 2,
  /** The inference memory sizes `npm run cost` prices side by side, with the one the template sets. */
  inferenceMemorySizesMb: [1769, 2048, 3008],
  /** Days in a billing month, as AWS turns byte-hours into GB-months (730 hours). */
  daysPerMonth: 730 / 24,
} as const;
