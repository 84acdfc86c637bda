/**
 * Examples in the OpenAPI document: what a request and its answer look like, for the reference at /docs.
 * Each sits beside the schema or route it illustrates; the unit test parses every one with its schema
 * (unknown fields included), so an example that drifts from the contract fails the build.
 */

export interface Example {
  summary: string;
  value: unknown;
}

/** Examples of one body, by name. */
export type Examples = Record<string, Example>;

/** The name an example gets from its summary: `A plate job, queued` → `a_plate_job_queued`. */
export const exampleName = (summary: string): string =>
  summary
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

/** One example, named after its summary. */
export const example = (summary: string, value: unknown): Examples => ({
  [exampleName(summary)]: { summary, value },
});
