import { type Page } from '@playwright/test';

export class DropdownPage {
  constructor(private readonly page: Page) {}

  get select() {
    return this.page.locator('#dropdown');
  }

  async open() {
    await this.page.goto('/dropdown');
  }

  async choose(label: string) {
    await this.select.selectOption({ label });
  }
}
