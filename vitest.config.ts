import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['engine/**/*.test.ts', 'controller/**/*.test.ts', 'cli/**/*.test.ts', 'bench/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/plain-summary-reporter.ts'],
  },
});
