import { defineConfig, devices } from '@playwright/test';

// The demo app's end-to-end suite, as a team keeps one beside its app.
export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 3_000 },
  retries: process.env.CI ? 1 : 0,
  reporter: [['list'], ['html', { open: 'never' }]],
  use: {
    baseURL: process.env.BASE_URL ?? 'http://127.0.0.1:8090',
    trace: 'on-first-retry',
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
});
