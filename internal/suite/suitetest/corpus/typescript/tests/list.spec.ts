import { test } from '@playwright/test';
import { ListPage } from '../pages/ListPage';

test.describe('list page object', () => {
  test('adds several at once', async ({ page }) => {
    const list = new ListPage(page);
    await list.open();
    await list.add('Flour', 'Sugar');
    await list.shouldCount(3);
  });

  test('starts with one item', async ({ page }) => {
    const list = new ListPage(page);
    await list.open();
    await list.shouldCount(1);
  });
});
