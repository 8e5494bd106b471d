import { test, expect } from '@playwright/test';

test('too clever', async ({ page }) => {
  await page.goto('https://example.com/list');
  const name = 'Eggs';
  await page.getByLabel('New item').fill(name);
  await page.waitForTimeout(1000);
  if (await page.getByText('Eggs').isVisible()) {
    await page.getByRole('button', { name: 'Add' }).click();
  }
  await expect(page).toHaveURL(/list/);
  await expect(page.getByRole('listitem')).toHaveScreenshot();
  await page.getByRole('button', { name: 'Add' }).click({ force: true });
});
