const { test, expect } = require('@playwright/test');

test.beforeEach(async ({ page }) => {
  await page.goto('/add_remove_elements/');
});

test('the add button is there', async ({ page }) => {
  await expect(page.getByRole('button', { name: /Add Element/i })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Add/Remove Elements' })).toBeVisible();
});

test('adds an element', async ({ page }) => {
  await page.getByRole('button', { name: /Add Element/i }).click();
  await expect(page.getByRole('button', { name: 'Delete' })).toHaveCount(1);
});

test('adds five elements and removes them all', async ({ page }) => {
  const add = page.getByRole('button', { name: /Add Element/i });
  for (let i = 0; i < 5; i++) {
    await add.click();
  }
  const deletes = page.locator('#elements .added-manually');
  await expect(deletes).toHaveCount(5);
  while (await deletes.count() > 0) {
    await deletes.first().click();
  }
  await expect(deletes).toHaveCount(0);
});

test('removing one element leaves the others', async ({ page }) => {
  await page.getByRole('button', { name: /Add Element/i }).click();
  await page.getByRole('button', { name: /Add Element/i }).click();
  await page.locator('.added-manually').first().click();
  await expect(page.locator('.added-manually')).toHaveCount(1);
});
