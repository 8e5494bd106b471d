// @ts-check
const { test, expect } = require('@playwright/test');
const { ListPage } = require('../pages/ListPage');

test('deleting the only item empties the list', async ({ page }) => {
  const listPage = new ListPage(page);
  await listPage.goto();
  await listPage.deleteItem('Bread');
  await expect(listPage.items).toHaveCount(0);
  await listPage.expectCount(0);
});

test('deleting one item keeps the others', async ({ page }) => {
  const listPage = new ListPage(page);
  await listPage.goto();
  await listPage.addItems('Salt', 'Pepper');
  await listPage.deleteItem('Salt');
  await expect(listPage.items).toHaveCount(2);
  await expect(listPage.item('Pepper')).toHaveCount(1);
  await expect(listPage.item('Salt')).toHaveCount(0);
  await listPage.expectCount(2);
});
