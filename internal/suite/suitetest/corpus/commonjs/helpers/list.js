const { expect } = require('@playwright/test');

const selectors = {
  input: '#item',
  addButton: '[data-testid="add-button"]',
  rows: '#items li',
  counter: '#count',
};

async function openList(page) {
  await page.goto('/list');
  const banner = page.locator('#tips');
  if (await banner.count()) {
    await page.locator('#dismiss-tips').click();
  }
}

async function addItem(page, name) {
  await page.locator(selectors.input).fill(name);
  await page.locator(selectors.addButton).click();
}

async function expectItems(page, n) {
  await expect(page.locator(selectors.counter), 'the counter').toHaveText(`${n} ${n === 1 ? 'item' : 'items'}`);
}

module.exports = { selectors, openList, addItem, expectItems };
