import { test, expect } from '@playwright/test';

test.describe('Form Authentication', () => {
  test.beforeEach(async ({ page }) => {
    await page.goto('/login');
  });

  test.afterEach(async ({ page }, testInfo) => {
    // keep a full-page screenshot of every test for the report
    const screenshot = await page.screenshot({ fullPage: true });
    await testInfo.attach('full page', { body: screenshot, contentType: 'image/png' });
  });

  test('should login with valid credentials', async ({ page }) => {
    await test.step('fill in the form', async () => {
      await page.getByLabel('Username').fill('tomsmith');
      await page.getByLabel('Password').fill('SuperSecretPassword!');
    });
    await test.step('submit', async () => {
      await page.getByRole('button', { name: ' Login' }).click();
    });
    await expect(page.locator('#flash')).toContainText('You logged into a secure area!');
    await expect(page).toHaveURL(/\/secure/);
  });

  test('should show an error for an invalid password', async ({ page }) => {
    await page.getByLabel('Username').fill('tomsmith');
    await page.getByLabel('Password').fill('wrongpassword');
    await page.getByRole('button', { name: ' Login' }).click();
    await expect(page.locator('#flash')).toContainText('Your password is invalid!');
  });

  test('should show an error for an unknown user', async ({ page }) => {
    await page.getByLabel('Username').fill('nobody');
    await page.getByLabel('Password').fill('SuperSecretPassword!');
    await page.getByRole('button', { name: ' Login' }).click();
    await expect(page.locator('#flash')).toContainText('Your username is invalid!');
  });

  test('should logout', async ({ page }) => {
    await page.getByLabel('Username').fill('tomsmith');
    await page.getByLabel('Password').fill('SuperSecretPassword!');
    await page.getByRole('button', { name: ' Login' }).click();
    await page.getByRole('link', { name: 'Logout' }).click();
    await expect(page.locator('#flash')).toContainText('You logged out of the secure area!');
  });
});
