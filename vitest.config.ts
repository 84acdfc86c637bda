import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest's order (slowest or largest first), except that the file which only reads the bundled assembly
 * waits until the other infra files have been taken. The package tests synthesize that assembly first
 * thing (about a minute of CPU in a clean clone); taken at the start, bundles.test.ts would hold one of
 * the two workers idle all that time. Queued last it ran its own minute of work alone at the end, so it
 * goes just before the integration files: by then the assembly is there, and others still run beside it.
 */
class BundledReaderAfterInfra extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const reader = sorted.filter((file) => file.moduleId.endsWith('test/infra/bundles.test.ts'));
    const rest = sorted.filter((file) => !reader.includes(file));
    const at = rest.findIndex((file) => file.project.name === 'integration');
    return at < 0 ? [...rest, ...reader] : [...rest.slice(0, at), ...reader, ...rest.slice(at)];
  }
}

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
    sequence: { sequencer: BundledReaderAfterInfra },
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
      // A file's hook may synthesize the stack (about a minute of CPU in a clean clone, more beside a busy
      // process): vitest's 10 s default cut cost.test.ts's setup short under load.
      {
        extends: true,
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
