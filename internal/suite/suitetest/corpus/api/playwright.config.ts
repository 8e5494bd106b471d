import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: './tests',
  testMatch: '**/*.test.ts',
  timeout: 15_000,
  expect: { timeout: 3_000 },
  reporter: [['list'], ['junit', { outputFile: 'results/junit.xml' }]],
  use: {
    baseURL: process.env.BASE_URL,
    extraHTTPHeaders: { Accept: 'application/json' },
    actionTimeout: 4_000,
  },
});
