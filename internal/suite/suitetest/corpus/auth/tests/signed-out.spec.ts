import { test, expect } from '@playwright/test';

// These run without the saved session.
test.use({ storageState: { cookies: [], origins: [] } });

test('the dashboard sends a visitor to the login page', async ({ page }) => {
  await page.goto('/dashboard');
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole('heading', { name: 'Log in' })).toBeVisible();
});

test('the login form has its fields', async ({ page }) => {
  await page.goto('/login');
  await expect(page.getByLabel('Email')).toHaveAttribute('type', 'email');
  await expect(page.getByLabel('Password')).toHaveAttribute('autocomplete', 'current-password');
  await expect(page.getByRole('checkbox', { name: 'Remember me' })).not.toBeChecked();
});
