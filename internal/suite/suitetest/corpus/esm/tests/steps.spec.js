import { test, expect } from '@playwright/test';

test('a shopping trip in steps', async ({ page }) => {
  await test.step('open the list', async () => {
    await page.goto('/list');
    await expect(page.getByRole('heading', { name: 'Shopping list' })).toBeVisible();
  });
  await test.step('add two things', async () => {
    for (const item of ['Pears', 'Plums']) {
      await test.step(`add ${item}`, async () => {
        await page.getByRole('textbox', { name: 'New item' }).fill(item);
        await page.getByRole('button', { name: 'Add', exact: true }).click();
      });
    }
  });
  await test.step('check the count', async () => {
    await expect(page.getByText(/^3 items$/)).toBeVisible();
  });
});
