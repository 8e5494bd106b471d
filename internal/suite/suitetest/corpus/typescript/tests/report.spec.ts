import { test, expect, type Locator } from '@playwright/test';

type Row = { region: string; revenue: number };

async function rowsOf(table: Locator): Promise<Row[]> {
  const rows = await table.locator('tbody tr').all();
  return Promise.all(
    rows.map(async (r) => ({
      region: (await r.locator('td').nth(0).innerText()).trim(),
      revenue: Number(await r.locator('td').nth(1).innerText()),
    })),
  );
}

test('the sales report lists each region once', async ({ page }) => {
  await page.goto('/delayed');
  await expect(page.getByText('Loading report…')).toBeHidden({ timeout: 5_000 });
  await expect(page.getByRole('heading', { level: 2 })).toHaveText('Report ready');
  const rows = await rowsOf(page.locator('#report table'));
  expect(rows.map((r) => r.region)).toEqual(['North', 'South', 'West']);
  expect(rows.every((r) => r.revenue > 0)).toBeTruthy();
});

test('refresh reloads the report', async ({ page }) => {
  await page.goto('/delayed');
  await expect(page.locator('#report')).toHaveAttribute('aria-busy', 'false', { timeout: 5_000 });
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect(page.locator('#report')).toHaveAttribute('aria-busy', 'false', { timeout: 5_000 });
  await expect(page.locator('#report tbody tr')).toHaveCount(3);
});
