import { test, expect } from '@playwright/test';

test.afterEach(async ({ page }, testInfo) => {
  await page.screenshot({ path: testInfo.outputPath('final.png'), fullPage: true });
  if (testInfo.status !== testInfo.expectedStatus) {
    console.log(`${testInfo.title} ended ${testInfo.status} on ${page.url()}`);
  }
});

test('checks the first checkbox', async ({ page }) => {
  await page.goto('/checkboxes');
  await page.check('#checkboxes input:first-child');
  expect(await page.isChecked('#checkboxes input:first-child')).toBeTruthy();
});

test('picks option 1', async ({ page }) => {
  await page.goto('/dropdown');
  await page.locator('#dropdown').selectOption({ label: 'Option 1' });
  await expect(page.locator('#dropdown option:checked')).toHaveText('Option 1');
});

test('types a number', async ({ page }) => {
  await page.goto('/inputs');
  await page.locator('input[type="number"]').fill('42');
  await expect(page.locator('input[type="number"]')).toHaveValue('42');
});

test('closes the entry ad', async ({ page }) => {
  await page.goto('/entry_ad');
  const modal = page.getByRole('dialog');
  await expect(modal).toBeVisible();
  await modal.getByText('Close').click();
  await expect(modal).toBeHidden();
});
