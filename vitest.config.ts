import { defineConfig } from 'vitest/config';

/** Unit files that set process-wide state (see the unit project). */
const UNIT_ISOLATED = [
  'test/unit/aws/clients.test.ts',
  'test/unit/aws/observability.test.ts',
  'test/unit/http/openapi.test.ts',
  'test/unit/client/client.test.ts',
  'test/unit/client/cli.test.ts',
  'test/unit/local/lambda-runtime.test.ts',
];

export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      // The unit files share their modules within a worker (isolate: false): importing the layers afresh
      // for each file cost more than its tests. The files that change what a module keeps (the environment
      // a configuration reads, a logger's console, timers) run isolated, as the rest of the suite does.
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: UNIT_ISOLATED, isolate: false },
      },
      { extends: true, test: { name: 'unit-isolated', include: UNIT_ISOLATED } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      { extends: true, test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 120_000 } },
    ],
  },
});
