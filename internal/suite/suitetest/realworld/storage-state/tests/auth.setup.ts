import { test as setup, expect } from '@playwright/test';

const authFile = 'playwright/.auth/user.json';

setup('authenticate', async ({ page }) => {
  await page.goto('/login');
  await page.getByLabel('Username').fill(process.env.PRACTICE_USER ?? 'tomsmith');
  await page.getByLabel('Password').fill(process.env.PRACTICE_PASSWORD ?? 'SuperSecretPassword!');
  await page.getByRole('button', { name: 'Login' }).click();
  await page.waitForURL('**/secure**');
  await expect(page.getByRole('heading', { name: 'Secure Area', exact: true })).toBeVisible();
  await page.context().storageState({ path: authFile });
});
