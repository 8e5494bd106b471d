const { test } = require('@playwright/test');
const { openList, addItem, expectItems } = require('../helpers/list');

test('counts several additions', async ({ page }) => {
  await openList(page);
  const names = ['A', 'B', 'C'];
  for (const [i, n] of names.entries()) {
    await addItem(page, n);
    await expectItems(page, i + 2);
  }
});
