const { test } = require('@playwright/test');

test.afterEach(async ({ page }) => {
  await page.getByRole('link', { name: 'Logout' }).click({ timeout: 300 }).catch(() => {});
  await page.goto('about:blank');
});

test('logs in', async ({ page }) => {
  await page.goto('/login.html');
  await page.getByRole('button', { name: 'Login' }).click();
});
