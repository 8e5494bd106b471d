import { defineConfig, devices } from '@playwright/test';

export default defineConfig({
  testDir: 'tests',
  timeout: 20_000,
  expect: { timeout: 4_000 },
  use: { baseURL: process.env.BASE_URL, actionTimeout: 4_000 },
  projects: [{ name: 'chrome', use: { ...devices['Desktop Chrome'] } }],
});
