// @ts-check
const { test, expect } = require('@playwright/test');

const users = {
  valid: { email: 'demo@webpilot.test', password: process.env.E2E_PASSWORD || '' },
};

test.describe.configure({ mode: 'serial' });

test.afterEach(async ({ page }, testInfo) => {
  if (testInfo.status !== testInfo.expectedStatus) console.log(`failed at ${page.url()}`);
});

test('signs in', async ({ page }) => {
  await page.goto('/login');
  await page.getByLabel('Email').fill(users.valid.email);
  await page.getByLabel('Password').fill(users.valid.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/dashboard/);
});

test('remembers the choice', async ({ page }) => {
  await page.goto('/login');
  const remember = page.getByRole('checkbox');
  await remember.check();
  await expect(remember).toBeChecked();
});
