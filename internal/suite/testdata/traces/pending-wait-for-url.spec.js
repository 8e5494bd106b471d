const { test } = require('@playwright/test');

test('signs in', async ({ page }) => {
  await page.goto('/login.html');
  await page.getByLabel('User name').fill('tomsmith');
  await page.waitForURL('**/secure**');
});
