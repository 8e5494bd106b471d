const { test, expect } = require('@playwright/test');
const { signIn } = require('../support/session');

test.describe('session', () => {
  test('signs in with the user from .env.e2e', async ({ page }) => {
    await signIn(page);
    await expect(page).toHaveURL(/dashboard/);
  });

  test('a wrong password keeps the visitor on the login page', async ({ page }) => {
    await page.goto('/login');
    await page.getByLabel('Email').fill(process.env.E2E_USER);
    await page.getByLabel('Password').fill('definitely-not-it');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/error=1/);
    await expect(page.getByRole('alert')).toBeVisible();
  });
});
