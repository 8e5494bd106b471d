import { test, expect } from '@playwright/test';
import { ListPage } from '../pages/ListPage';
import groceries from '../data/groceries.json';

test.describe('shopping list', () => {
  let list: ListPage;

  test.beforeEach(async ({ page }) => {
    list = new ListPage(page);
    await list.goto();
  });

  test('starts with bread', async ({ page }) => {
    await expect(page).toHaveTitle(/Shopping list/);
    await expect(list.items).toHaveCount(1);
    await list.expectCount(1);
  });

  for (const item of groceries) {
    test(`adds ${item}`, async () => {
      await test.step('add it', async () => {
        await list.add(item);
      });
      await expect(list.items.last()).toContainText(item);
      await list.expectCount(2);
    });
  }

  test('deletes bread', async ({ page }) => {
    await page.getByRole('button', { name: /delete bread/i }).click();
    await expect.soft(list.items).toHaveCount(0);
    await list.expectCount(0);
  });
});
