import { expect, type Locator, type Page } from '@playwright/test';
import { BasePage } from './BasePage';

export class ListPage extends BasePage {
  constructor(page: Page) {
    super(page, '/list');
  }

  private get field(): Locator {
    return this.page.locator('#item');
  }

  private get addButton(): Locator {
    return this.page.getByTestId('add-button');
  }

  get counter(): Locator {
    return this.page.locator('#count');
  }

  async add(...names: string[]): Promise<void> {
    for (const name of names) {
      await this.field.fill(name);
      await this.addButton.click();
    }
  }

  async shouldCount(n: number): Promise<void> {
    await expect(this.counter).toHaveText(`${n} item${n === 1 ? '' : 's'}`);
  }
}
