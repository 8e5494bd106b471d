import { type Locator, type Page, expect } from '@playwright/test';

// The shopping list page: what the tests do there, and where.
export class ShoppingList {
  readonly entry: Locator;
  readonly add: Locator;
  readonly rows: Locator;
  readonly total: Locator;

  constructor(readonly page: Page) {
    this.entry = page.getByRole('textbox', { name: 'New item' });
    this.add = page.getByTestId('add-button');
    this.rows = page.locator('#items li');
    this.total = page.locator('#count');
  }

  async open() {
    await this.page.goto('/list');
    const tips = this.page.getByRole('button', { name: 'Dismiss' });
    if (await tips.isVisible()) await tips.click();
  }

  async put(item: string) {
    await this.entry.fill(item);
    await this.add.click();
  }

  async hasItems(n: number) {
    await expect(this.rows).toHaveCount(n);
    await expect(this.total).toHaveText(n === 1 ? '1 item' : `${n} items`);
  }
}
