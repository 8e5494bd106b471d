import { type Locator, type Page, expect } from '@playwright/test';

export class ListPage {
  readonly page: Page;
  readonly newItem: Locator;
  readonly addButton: Locator;
  readonly items: Locator;
  readonly count: Locator;

  constructor(page: Page) {
    this.page = page;
    this.newItem = page.getByRole('textbox', { name: 'New item' });
    this.addButton = page.getByTestId('add-button');
    this.items = page.locator('#items li');
    this.count = page.locator('#count');
  }

  async goto() {
    await this.page.goto('/list');
    const tips = this.page.getByRole('button', { name: 'Dismiss' });
    if (await tips.isVisible()) await tips.click();
  }

  async add(name: string) {
    await this.newItem.fill(name);
    await this.addButton.click();
  }

  async expectCount(n: number) {
    await expect(this.count, `the list should say ${n} items`).toHaveText(new RegExp(`^${n} items?$`));
  }
}
