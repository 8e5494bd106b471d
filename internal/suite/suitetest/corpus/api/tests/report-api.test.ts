import { test, expect } from '@playwright/test';
import { type Report, total } from '../lib/report';

test.describe('report API', () => {
  test('answers JSON with three regions', async ({ request }) => {
    const res = await request.get('/api/report');
    expect(res.ok()).toBeTruthy();
    expect(res.headers()['content-type']).toContain('application/json');
    const body = (await res.json()) as Report;
    expect(body.title).toBe('Report ready');
    expect(body.rows).toHaveLength(3);
    expect(total(body)).toBeGreaterThan(0);
  });

  test('the page shows what the API answers', async ({ page, request }) => {
    const body = (await (await request.get('/api/report')).json()) as Report;
    await page.goto('/delayed');
    for (const row of body.rows) {
      await expect(page.getByRole('row', { name: new RegExp(`${row.region}\\s+${row.revenue}`) })).toBeVisible();
    }
  });
});
