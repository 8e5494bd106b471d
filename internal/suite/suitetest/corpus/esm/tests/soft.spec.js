import { test, expect } from '@playwright/test';

test('checks everything before failing', async ({ page }) => {
  await page.goto('/list');
  await expect.soft(page).toHaveTitle('Shopping list · Acme');
  await expect.soft(page.locator('#count')).toHaveText('1 item');
  await expect.soft(page.getByRole('listitem')).toHaveCount(1);
  await expect(page.getByRole('note')).toContainText('kept for 7 days');
});
