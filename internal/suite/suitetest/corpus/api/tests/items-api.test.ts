import { test, expect } from '@playwright/test';

test('saving an item answers 204', async ({ request }) => {
  const res = await request.post('/api/items', { data: 'Milk' });
  expect(res.status()).toBe(204);
});

test('the list page adds without a reload', async ({ page }) => {
  let navigations = 0;
  page.on('framenavigated', () => navigations++);
  await page.goto('/list');
  await page.locator('#item').fill('Figs');
  await page.getByTestId('add-button').click();
  await expect(page.locator('#items li').last()).toHaveText(/^Figs/);
  expect(navigations).toBe(1);
});
