import { test, expect } from '@playwright/test';
import { ListPage } from '../pages/ListPage';

interface Basket {
  readonly label: string;
  readonly items: readonly string[];
}

const baskets: Basket[] = [
  { label: 'breakfast', items: ['Eggs', 'Bacon'] },
  { label: 'baking', items: ['Flour', 'Butter', 'Sugar'] },
];

function expected(b: Basket): number {
  return b.items.length + 1; // the list starts with bread
}

for (const basket of baskets) {
  test.describe(`the ${basket.label} basket`, () => {
    test('is counted', async ({ page }) => {
      const list = new ListPage(page);
      await list.open();
      await list.add(...basket.items);
      await list.shouldCount(expected(basket));
    });

    test('keeps every item', async ({ page }) => {
      const list = new ListPage(page);
      await list.open();
      await list.add(...basket.items);
      for (const item of basket.items) {
        await expect(page.getByRole('listitem').filter({ hasText: item })).toHaveCount(1);
      }
    });
  });
}
