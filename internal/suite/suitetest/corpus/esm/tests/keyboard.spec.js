import { test, expect } from '@playwright/test';

test.describe('keyboard use of the list', () => {
  test.beforeEach(async ({ page }) => {
    await page.goto('/list');
    await page.locator('#dismiss-tips').click();
  });

  test('Enter adds the typed item', async ({ page }) => {
    const field = page.getByPlaceholder('Add an item');
    await field.click();
    await page.keyboard.type('Lemons');
    await page.keyboard.press('Enter');
    await expect(page.locator('#items')).toContainText('Lemons');
    await expect(page.locator('#count')).toHaveText('2 items');
  });

  test('Tab reaches the Add button', async ({ page }) => {
    await page.getByPlaceholder('Add an item').fill('Limes');
    await page.keyboard.press('Tab');
    await expect(page.getByTestId('add-button')).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.locator('#items li')).toHaveCount(2);
  });
});
