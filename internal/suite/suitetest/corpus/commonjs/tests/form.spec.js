const { test, expect } = require('@playwright/test');

test('the contact form requires a name', async ({ page }) => {
  await page.goto('/form');
  await page.getByRole('button', { name: 'Send message' }).click();
  await expect(page.locator('#name-error')).toHaveText('Name is required');
});

test('the contact form thanks the sender', async ({ page }) => {
  await page.goto('/form');
  await page.getByLabel('Full name').fill('Ada');
  await page.getByPlaceholder('you@example.com').fill('ada@example.com');
  await page.selectOption('#topic', 'support');
  await page.check('#agree');
  await page.getByRole('button', { name: 'Send message' }).click();
  await expect(page.getByRole('status')).toContainText('Thanks, Ada!');
});
