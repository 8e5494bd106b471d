import { test, expect } from '@playwright/test';

test('opens the secure area without logging in again', async ({ page }) => {
  await page.goto('/secure');
  await expect(page.getByRole('heading', { name: 'Secure Area', exact: true })).toBeVisible();
});

test('the logout link is offered', async ({ page }) => {
  await page.goto('/secure');
  await expect(page.getByRole('link', { name: 'Logout' })).toHaveAttribute('href', '/logout');
});
