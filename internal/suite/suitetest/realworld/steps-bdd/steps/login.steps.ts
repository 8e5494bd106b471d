import { test, expect, type Page } from '@playwright/test';

export async function givenIAmOnTheLoginPage(page: Page) {
  await test.step('Given I am on the login page', async () => {
    await page.goto('/login');
    await expect(page.getByRole('heading', { name: 'Login Page' })).toBeVisible();
  });
}

export async function whenILogInAs(page: Page, username: string, password: string) {
  await test.step(`When I log in as "${username}"`, async () => {
    await page.getByRole('textbox', { name: 'Username' }).fill(username);
    await page.getByRole('textbox', { name: 'Password' }).fill(password);
    await page.getByRole('button', { name: 'Login' }).click();
  });
}

export async function thenISeeTheMessage(page: Page, message: string) {
  await test.step(`Then I see "${message}"`, async () => {
    await expect(page.locator('#flash')).toContainText(message);
  });
}
