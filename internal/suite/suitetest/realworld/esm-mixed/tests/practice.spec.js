import { test, expect } from '@playwright/test';

test.describe('home', () => {
  test('lists the examples', async ({ page }) => {
    await page.goto('/');
    await expect(page.getByRole('heading', { level: 2 })).toHaveText('Available Examples');
    await expect(page.getByRole('listitem')).toHaveCount(9);
  });
});

test.describe('login page', () => {
  test('the login button carries its icon', async ({ page }) => {
    await page.goto('/login');
    await expect(page.getByRole('button', { name: ' Login', exact: true })).toBeEnabled();
  });

  test('logs in and out', async ({ page }) => {
    await page.goto('/login');
    await page.getByLabel('Username', { exact: true }).fill('tomsmith');
    await page.getByLabel('Password', { exact: true }).fill('SuperSecretPassword!');
    await page.getByRole('button', { name: ' Login', exact: true }).click();
    await expect(page.getByText('You logged into a secure area!')).toBeVisible();
    await page.getByRole('link', { name: 'Logout' }).click();
    await expect(page.getByText('You logged out of the secure area!')).toBeVisible();
  });
});

test.describe('dropdown', () => {
  test('offers two options', async ({ page }) => {
    await page.goto('/dropdown');
    await expect(page.getByRole('combobox').getByRole('option')).toHaveText(['Please select an option', 'Option 1', 'Option 2']);
  });
});
