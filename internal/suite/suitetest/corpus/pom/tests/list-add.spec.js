// @ts-check
const { test, expect } = require('@playwright/test');
const { PageManager } = require('../pages');

const GROCERIES = ['Oranges', 'Rice', 'Coffee'];

test.describe('Adding items', () => {
  test.beforeEach(async ({ page }) => {
    await new PageManager(page).listPage.goto();
  });

  test('should add a single item', async ({ page }) => {
    const { listPage } = new PageManager(page);
    await listPage.addItems('Pasta');
    await expect(listPage.item('Pasta')).toBeVisible();
    await listPage.expectCount(2);
  });

  test('should add several items in order', async ({ page }) => {
    const { listPage } = new PageManager(page);
    await listPage.addItems(...GROCERIES);
    await expect(listPage.items).toHaveText([/Bread/, ...GROCERIES.map((g) => new RegExp(g))]);
    await listPage.expectCount(GROCERIES.length + 1);
  });

  test('should clear the input after adding', async ({ page }) => {
    const { listPage } = new PageManager(page);
    await listPage.addItems('Tea');
    await expect(listPage.itemInput).toBeEmpty();
  });
});
