import { test, expect, type Page } from '@playwright/test';

test.use({ baseURL: 'https://staging.example.com' });

test.describe('shopping list', () => {
  test.beforeEach(async ({ page }: { page: Page }) => {
    await page.goto('/list');
  });

  test('adds an item', async ({ page }) => {
    await page.getByLabel('New item').fill('Eggs');
    await page.getByTestId('add-button').click();
    await expect(page.getByRole('listitem').filter({ hasText: 'Eggs' })).toBeVisible();
    await expect(page.getByRole('listitem')).toHaveCount(2);
    await expect(page.locator('#count')).toHaveText('2 items');
  });

  test('starts with bread', async ({ page }) => {
    await expect(page).toHaveTitle('Shopping list · Acme');
    await expect(page.getByRole('listitem').first()).toContainText('Bread');
    await expect(page.getByRole('listitem').last()).toContainText('Bread');
    await expect(page.locator('#items').getByRole('button', { name: 'Delete Bread', exact: true })).toBeEnabled();
  });
});
