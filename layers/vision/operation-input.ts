import type { OperationRunner } from '#core/use-cases/run-inference.ts';

/** What every operation receives; its own module so that operations and the runner that lists them do not import each other. */
export type OperationInput = Parameters<OperationRunner['run']>[1];
