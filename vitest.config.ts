import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['engine/**/*.test.ts', 'controller/**/*.test.ts', 'sim/**/*.test.ts', 'cli/**/*.test.ts', 'bench/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    // Test files share a worker's module cache: importing @kubernetes/client-node (~4.5 s) once per worker
    // instead of once per file took the suite from ~170 s to ~35 s on the 2-core machine. Files must not
    // depend on fresh module state (builders' resetIds() exists for that).
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/plain-summary-reporter.ts'],
  },
});
