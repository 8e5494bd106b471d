const { test, expect } = require('@playwright/test');

test('the sales report loads its table', async ({ page }) => {
  await page.goto('/delayed');
  const report = page.locator('#report');
  // The report takes a few seconds to compute.
  await expect(report).toHaveAttribute('aria-busy', 'false', { timeout: 10_000 });
  await expect(report.getByRole('row')).not.toHaveCount(0);
  await expect(report.locator('th')).toHaveText(['Region', 'Revenue']);
});
