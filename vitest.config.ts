import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'engine/**/*.test.ts',
      'controller/**/*.test.ts',
      'sim/**/*.test.ts',
      'cli/**/*.test.ts',
      'bench/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    environment: 'node',
    pool: 'forks',
    // Test files share a worker's module cache, so the heavy imports (@kubernetes/client-node, the AWS SDK,
    // the catalog) load once per worker instead of once per file. Measured again after the controller unit
    // tests moved from the simulator to test/fakes: isolating every file still more than doubles the suite's
    // time, most of the difference being imports (docs/building.md, "Tests"). Files must not depend on
    // fresh module state (builders' resetIds() exists for that).
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/plain-summary-reporter.ts'],
  },
});
