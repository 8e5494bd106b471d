const { test, expect } = require('@playwright/test');
const { openList, addItem, expectItems, selectors } = require('../helpers/list');
const items = require('../data/items');

test.describe('adding', () => {
  test.beforeEach(async ({ page }) => {
    await openList(page);
  });

  for (const { name, expected } of items) {
    test(`adds ${name}`, async ({ page }) => {
      await addItem(page, name);
      await expect(page.locator(selectors.rows).filter({ hasText: name })).toHaveCount(1);
      await expectItems(page, expected);
    });
  }
});
