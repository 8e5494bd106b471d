import { test, expect, type Page } from '@playwright/test';

const addItem = async (page: Page, name: string) => {
  await page.getByRole('textbox', { name: 'New item' }).fill(name);
  await page.getByRole('button', { name: 'Add', exact: true }).click();
};

test('a signed-in user keeps a list', async ({ page }) => {
  await page.goto('/dashboard');
  await page.getByRole('link', { name: 'Shopping list' }).click();
  await addItem(page, 'Honey');
  await expect(page.getByRole('listitem').filter({ hasText: 'Honey' })).toBeVisible();
  await expect(page.locator('#count')).toHaveText('2 items');
});

test('an empty name is not added', async ({ page }) => {
  await page.goto('/list');
  await addItem(page, '   ');
  await expect(page.locator('#items li')).toHaveCount(1);
});
