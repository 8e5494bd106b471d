const { expect } = require('@playwright/test');

class ListPage {
  /**
   * @param {import('@playwright/test').Page} page
   */
  constructor(page) {
    this.page = page;
    this.itemInput = page.locator('input#item');
    this.addButton = page.locator('[data-testid=add-button]');
    this.items = page.locator('ul#items > li');
    this.itemCount = page.locator('p#count');
    this.tips = page.locator('#tips');
  }

  async goto() {
    await this.page.goto('/list');
    if (await this.tips.isVisible()) {
      await this.tips.getByRole('button').click();
    }
  }

  async addItems(...names) {
    for (const name of names) {
      await this.itemInput.fill(name);
      await this.addButton.click();
    }
  }

  item(name) {
    return this.items.filter({ hasText: name });
  }

  async deleteItem(name) {
    await this.item(name).getByRole('button', { name: `Delete ${name}` }).click();
  }

  async expectCount(n) {
    await expect(this.itemCount).toHaveText(n === 1 ? '1 item' : `${n} items`);
  }
}

module.exports = { ListPage };
