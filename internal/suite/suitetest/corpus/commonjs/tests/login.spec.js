const { test, expect } = require('@playwright/test');

const valid = { email: 'demo@webpilot.test', password: process.env.E2E_PASSWORD };

test.describe('login', () => {
  test('refuses a wrong password', async ({ page }) => {
    await page.goto('/login');
    await page.fill('#email', valid.email);
    await page.fill('#password', 'nope');
    await page.click('button[type="submit"]');
    await expect(page.getByRole('alert')).toHaveText('Invalid email or password');
  });

  test('signs in', async ({ page }) => {
    await page.goto('/login');
    await page.fill('#email', valid.email);
    await page.fill('#password', valid.password);
    await page.click('button[type="submit"]');
    await expect(page.locator('h1')).toHaveText(/Welcome back/);
  });
});
