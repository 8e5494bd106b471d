import { test, expect } from '@playwright/test';

test.describe('widgets', () => {
  test('menu shows the gallery link', async ({ page }) => {
    // Gallery comes and goes between page loads on this app
    await page.goto('/disappearing_elements');
    await expect(page.getByRole('link', { name: 'Gallery' })).toBeVisible({ timeout: 1_000 });
  });

  test('dropdown selects option 2', async ({ page }) => {
    await page.goto('/dropdown');
    await page.selectOption('#dropdown', '2');
    await expect(page.locator('#dropdown')).toHaveValue('2');
  });

  test('checkboxes toggle', async ({ page }) => {
    await page.goto('/checkboxes');
    const first = page.locator('#checkboxes input').first();
    await first.check();
    await expect(first).toBeChecked();
  });

  test('dynamic content appears', async ({ page }) => {
    await page.goto('/dynamic_loading/1');
    await page.getByRole('button', { name: 'Start' }).click();
    await expect(page.getByText('Hello World!')).toBeVisible({ timeout: 5_000 });
  });

  test('table lists Jason Doe', async ({ page }) => {
    await page.goto('/tables');
    const row = page.locator('#table1 tbody tr').filter({ hasText: 'jdoe@hotmail.com' });
    await expect(row.locator('td').nth(1)).toHaveText('Jason');
  });
});
