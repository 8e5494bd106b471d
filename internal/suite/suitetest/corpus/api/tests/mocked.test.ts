import { test, expect } from '@playwright/test';
import type { Report } from '../lib/report';

const fake: Report = { title: 'Quarter closed', rows: [{ region: 'East', revenue: 10 }] };

test.beforeEach(async ({ page }) => {
  await page.route('**/api/report', (route) => route.fulfill({ json: fake }));
});

test('renders a mocked report', async ({ page }) => {
  await page.goto('/delayed');
  await expect(page.locator('#report h2')).toHaveText(fake.title);
  await expect(page.locator('#report tbody tr')).toHaveCount(fake.rows.length);
  await expect(page.locator('#report td').first()).toHaveText('East');
});

test('a failing API leaves the report loading', async ({ page }) => {
  await page.unroute('**/api/report');
  await page.route('**/api/report', (route) => route.abort());
  await page.goto('/delayed');
  await expect(page.getByText('Loading report…')).toBeVisible();
  await expect(page.locator('#report')).toHaveAttribute('aria-busy', 'true');
});
