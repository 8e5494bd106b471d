const { defineConfig, devices } = require('@playwright/test');

module.exports = defineConfig({
  testDir: './specs',
  testMatch: '**/*.test.js',
  timeout: 30000,
  use: { baseURL: process.env.BASE_URL || 'http://localhost:9292', trace: 'retain-on-failure' },
  projects: [{ name: 'Desktop Chrome', use: { ...devices['Desktop Chrome'] } }],
});
