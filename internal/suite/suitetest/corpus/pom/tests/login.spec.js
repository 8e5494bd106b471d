// @ts-check
const { test, expect } = require('@playwright/test');
const { PageManager } = require('../pages');

const USER = 'demo@webpilot.test';

test.describe('Login', () => {
  /** @type {PageManager} */
  let pm;

  test.beforeEach(async ({ page }) => {
    pm = new PageManager(page);
    await pm.loginPage.goto();
  });

  test('valid credentials open the dashboard', async ({ page }) => {
    await pm.loginPage.login(USER, process.env.E2E_PASSWORD || '');
    await expect(page).toHaveURL(/\/dashboard/);
    await expect(page.locator('h1')).toContainText('Welcome back');
  });

  test('invalid credentials show an error', async ({ page }) => {
    await pm.loginPage.login(USER, 'wrong-password');
    await expect(pm.loginPage.errorMessage).toBeVisible();
    await expect(pm.loginPage.errorMessage).toHaveText('Invalid email or password');
    await expect(page).not.toHaveURL(/dashboard/);
  });

  test('remember me can be ticked before signing in', async ({ page }) => {
    await pm.loginPage.rememberMe.check();
    await expect(pm.loginPage.rememberMe).toBeChecked();
    await pm.loginPage.login(USER, process.env.E2E_PASSWORD || '');
    await expect(page).toHaveURL(/\/dashboard/);
  });
});
