import { defineConfig, devices } from '@playwright/test';

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  timeout: 20_000,
  use: {
    baseURL: process.env.BASE_URL,
    video: 'on',
    screenshot: 'on',
    trace: 'on',
    actionTimeout: 4_000,
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
});
