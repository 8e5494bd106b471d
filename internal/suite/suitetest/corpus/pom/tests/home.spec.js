// @ts-check
const { test, expect } = require('@playwright/test');

test.describe('home page', () => {
  test('has a link to every area', async ({ page }) => {
    await page.goto('/');
    await expect(page).toHaveTitle('Acme demo');
    const nav = page.getByRole('navigation');
    for (const name of ['Log in', 'Contact form', 'Shopping list', 'Sales report', 'Shop']) {
      await expect(nav.getByRole('link', { name, exact: true })).toBeVisible();
    }
  });

  test('the shopping list link leads to the list', async ({ page }) => {
    await page.goto('/');
    await page.getByRole('link', { name: 'Shopping list' }).click();
    await expect(page).toHaveURL('/list');
    await expect(page.getByRole('heading', { name: 'Shopping list' })).toBeVisible();
  });
});
