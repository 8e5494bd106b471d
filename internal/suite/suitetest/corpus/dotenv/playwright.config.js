// @ts-check
const path = require('path');
const { defineConfig, devices } = require('@playwright/test');

// Local defaults live in .env.e2e; CI overrides them from its own secrets.
require('dotenv').config({ path: path.resolve(__dirname, '.env.e2e') });

module.exports = defineConfig({
  testDir: 'tests',
  fullyParallel: true,
  retries: process.env.CI ? 1 : 0,
  timeout: 20_000,
  expect: { timeout: 5_000 },
  reporter: process.env.CI ? 'dot' : 'list',
  use: {
    baseURL: process.env.BASE_URL || process.env.APP_ORIGIN,
    actionTimeout: 10_000,
    trace: 'retain-on-failure',
  },
  projects: [
    { name: 'chromium', use: { ...devices['Desktop Chrome'] } },
    { name: 'firefox', use: { ...devices['Desktop Firefox'] } },
  ],
});
