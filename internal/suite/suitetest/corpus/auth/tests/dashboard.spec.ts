import { test, expect } from '@playwright/test';

test.describe('dashboard (signed in)', () => {
  test.beforeEach(async ({ page }) => {
    await page.goto('/dashboard');
  });

  test('greets the user by name', async ({ page }) => {
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Welcome back, Demo User');
  });

  test('counts the open orders', async ({ page }) => {
    const summary = page.getByText(/open orders/);
    await expect(summary).toHaveText(/You have \d+ open orders\./);
    const n = Number((await summary.textContent())?.match(/\d+/)?.[0]);
    expect(n, 'open orders should be a positive number').toBeGreaterThan(0);
  });

  test('links to the list, the report and the search', async ({ page }) => {
    const nav = page.getByRole('navigation');
    await expect(nav.getByRole('link')).toHaveCount(3);
    await nav.getByRole('link', { name: 'Shopping list' }).click();
    await expect(page).toHaveURL(/\/list$/);
  });
});
