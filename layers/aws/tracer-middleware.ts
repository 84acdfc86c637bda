import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';

/**
 * Powertools' tracer and its middleware as one module, imported by ./observability.ts where tracing is on:
 * each `import()` is an entry of its own to the bundler, and each entry splits the chunks every cold start
 * loads a little further (about a millisecond of CPU a chunk, `npm run bench -- coldstart`).
 */
export { captureLambdaHandler, Tracer };
