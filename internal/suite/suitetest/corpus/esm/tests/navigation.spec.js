import { test, expect } from '@playwright/test';

test('the start page links onward', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveURL(/\/$/);
  const links = page.getByRole('link');
  expect(await links.count()).toBeGreaterThan(0);
});
