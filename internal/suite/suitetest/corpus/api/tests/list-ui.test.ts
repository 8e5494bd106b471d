import { test, expect } from '@playwright/test';

test.describe('list, through the UI', () => {
  test.beforeEach(async ({ page }) => {
    await page.goto('/list');
  });

  test('counts after adding two', async ({ page }) => {
    for (const item of ['Oats', 'Nuts']) {
      await page.getByRole('textbox', { name: 'New item' }).fill(item);
      await page.getByRole('button', { name: 'Add' }).click();
    }
    await expect(page.getByText(/^\d+ items?$/)).toHaveText('3 items');
  });

  test('the add form stays on the page', async ({ page }) => {
    await page.getByRole('textbox', { name: 'New item' }).fill('Oats');
    await page.getByRole('button', { name: 'Add' }).click();
    await expect(page).toHaveURL(/\/list$/);
  });
});
