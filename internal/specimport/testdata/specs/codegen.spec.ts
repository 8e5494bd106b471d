import { test, expect } from '@playwright/test';

test('test', async ({ page }) => {
  await page.goto('http://localhost:3000/list');
  await page.getByPlaceholder('Add an item').click();
  await page.getByPlaceholder('Add an item').fill('Oat milk');
  await page.getByRole('button', { name: 'Add' }).click();
  await expect(page.getByText('Oat milk')).toBeVisible();
  await page.getByRole('button', { name: 'Delete Bread' }).click();
  await expect(page.getByRole('listitem')).toHaveCount(1);
});
