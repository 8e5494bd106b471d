import type { PlaywrightTestConfig } from '@playwright/test';

const config: PlaywrightTestConfig = {
  testDir: './tests',
  timeout: 15000,
  expect: { timeout: 2000 },
  use: {
    baseURL: process.env.BASE_URL ?? 'http://localhost:8080',
    actionTimeout: 4000,
    testIdAttribute: 'data-testid',
  },
};

export default config;
