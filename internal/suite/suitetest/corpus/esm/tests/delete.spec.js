import { test, expect } from '@playwright/test';

test.describe.configure({ mode: 'serial' });

/** @type {import('@playwright/test').Page} */
let page;

test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  await page.goto('/list');
});

test.afterAll(async () => {
  await page.close();
});

test('adds two items', async () => {
  for (const name of ['Kiwi', 'Mango']) {
    await page.locator('#item').fill(name);
    await page.locator('#item').press('Enter');
  }
  await expect(page.locator('#count')).toHaveText('3 items');
});

test('deletes one of them', async () => {
  await page.getByRole('button', { name: 'Delete Kiwi' }).click();
  await expect(page.locator('#items li')).toHaveText([/Bread/, /Mango/]);
  await expect(page.locator('#count')).toHaveText('2 items');
});
