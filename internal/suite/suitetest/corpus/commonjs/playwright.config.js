// @ts-check
const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({
  testDir: './tests',
  timeout: 15 * 1000,
  workers: process.env.CI ? 1 : undefined,
  use: {
    baseURL: process.env.BASE_URL,
    actionTimeout: 4000,
    screenshot: 'only-on-failure',
  },
  expect: { timeout: 2000 },
});
