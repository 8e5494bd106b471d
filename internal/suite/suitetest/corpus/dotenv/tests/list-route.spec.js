const { test, expect } = require('@playwright/test');

const route = process.env.LIST_ROUTE;

test.beforeEach(async ({ page }) => {
  await page.goto(route);
  const tips = page.getByRole('note');
  if (await tips.isVisible()) await tips.getByRole('button', { name: 'Dismiss' }).click();
});

test('the list starts with bread', async ({ page }) => {
  await expect(page.locator('#items > li')).toHaveCount(1);
  await expect(page.locator('#items > li').first()).toContainText('Bread');
});

test('an added item is counted', async ({ page }) => {
  const input = page.getByRole('textbox', { name: 'New item' });
  await input.fill('Cheese');
  await input.press('Enter');
  await expect(page.locator('#items > li')).toHaveCount(2);
  await expect(page.locator('[aria-live=polite]')).toHaveText('2 items');
});
