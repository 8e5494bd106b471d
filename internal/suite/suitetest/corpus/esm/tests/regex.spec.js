import { test, expect } from '@playwright/test';

const ITEM = /^(\d+) items?$/;

test('the counter reads as a number of items', async ({ page }) => {
  await page.goto('/list');
  await expect(page.locator('[aria-live="polite"]')).toHaveText(ITEM);
  const text = await page.locator('[aria-live="polite"]').textContent();
  expect(Number(ITEM.exec(text ?? '')?.[1])).toBe(1);
});

test('the delete button names its item', async ({ page }) => {
  await page.goto('/list');
  await expect(page.getByRole('button', { name: /^Delete / })).toHaveAttribute('aria-label', /Bread/);
});
