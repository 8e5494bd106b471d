// @ts-check
const { test } = require('@playwright/test');
const { ListPage } = require('../pages/ListPage');

const cases = [
  { adds: [], total: 1 },
  { adds: ['Flour'], total: 2 },
  { adds: ['Flour', 'Sugar', 'Yeast'], total: 4 },
];

test.describe.parallel('item counter', () => {
  cases.forEach(({ adds, total }) => {
    test(`shows ${total} after adding ${adds.length}`, async ({ page }) => {
      const listPage = new ListPage(page);
      await listPage.goto();
      if (adds.length) await listPage.addItems(...adds);
      await listPage.expectCount(total);
    });
  });
});
