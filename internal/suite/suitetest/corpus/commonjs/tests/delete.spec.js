const { test, expect } = require('@playwright/test');
const { openList, expectItems } = require('../helpers/list');

test('deletes the only item', async ({ page }) => {
  await openList(page);
  await page.getByRole('button', { name: 'Delete Bread' }).click();
  await expect(page.locator('#items li')).toHaveCount(0);
  await expectItems(page, 0);
});
