import { test, expect } from '@playwright/test';

test.use({ baseURL: 'https://staging.example.com' });

test('contact form is sent', async ({ page }) => {
  await page.goto('/form');
  await expect(page).toHaveURL('/form');
  await page.getByLabel('Full name').fill('Ada Lovelace');
  await page.getByPlaceholder('you@example.com').pressSequentially('ada@example.com');
  await page.getByLabel('Topic').selectOption('support');
  await page.getByLabel('Message').fill('Hello');
  await page.getByLabel('I agree to the terms').check();
  await expect(page.getByLabel('I agree to the terms')).toBeChecked();
  await expect(page.getByLabel('Full name')).toHaveValue('Ada Lovelace');
  await page.getByRole('button', { name: 'Send message' }).click();
  await expect(page.getByRole('status')).toContainText('Thanks, Ada Lovelace!');
  await expect(page.getByText('Name is required')).not.toBeVisible();
});

test('contact form needs a name', async ({ page }) => {
  await page.goto('/form');
  await page.getByRole('button', { name: 'Send message' }).click();
  await expect(page.locator('#name-error')).toHaveText('Name is required');
  await expect(page.getByLabel('I agree to the terms')).not.toBeChecked();
});
