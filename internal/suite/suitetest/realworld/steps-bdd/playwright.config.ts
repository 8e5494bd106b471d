import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: './features',
  timeout: 30_000,
  use: { baseURL: process.env.BASE_URL, actionTimeout: 8_000, trace: 'retain-on-failure' },
});
