// @ts-check
const { test, expect } = require('@playwright/test');

test.describe.configure({ mode: 'serial' });

/** @type {import('@playwright/test').Page} */
let page;

test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  await page.goto('/login');
  await page.locator('#username').fill('tomsmith');
  await page.locator('#password').fill('SuperSecretPassword!');
  await page.getByRole('button', { name: '\uf090 Login' }).click();
});

test.afterAll(async () => {
  await page.close();
});

test('lands on the secure area', async () => {
  await expect(page.getByRole('heading', { name: 'Secure Area', exact: true })).toBeVisible();
  await expect(page.locator('.flash.success')).toContainText('You logged into a secure area!');
});

test('has a logout button', async () => {
  await expect(page.getByRole('link', { name: '\uf08b Logout' })).toBeVisible();
});

test('logs out', async () => {
  await page.getByRole('link', { name: '\uf08b Logout' }).click();
  await expect(page).toHaveURL(/login/);
  await expect(page.locator('#flash')).toContainText('You logged out');
});
