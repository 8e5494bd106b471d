import { test, expect } from '@playwright/test';

test('checkbox 1 can be ticked while signed in', async ({ page }) => {
  await page.goto('/checkboxes');
  const boxes = page.locator('#checkboxes input[type="checkbox"]');
  await boxes.first().check();
  await expect(boxes.first()).toBeChecked();
  await expect(boxes.nth(1)).toBeChecked();
});
