import { test, expect } from '@playwright/test';
import { ShoppingList } from '../pages/ShoppingList';

test.describe('shopping list', () => {
  let list: ShoppingList;

  test.beforeEach(async ({ page }) => {
    list = new ShoppingList(page);
    await list.open();
  });

  test('starts with bread', async () => {
    await expect(list.rows.first()).toContainText('Bread');
    await list.hasItems(1);
  });

  test('takes oat milk', async () => {
    await list.put('Oat milk');
    await expect(list.rows.last()).toContainText('Oat milk');
    await list.hasItems(2);
  });
});
