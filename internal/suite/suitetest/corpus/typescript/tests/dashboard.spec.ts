import { test, expect, type Page } from '@playwright/test';
import { LoginPage } from '../pages/LoginPage';

async function signedIn(page: Page): Promise<void> {
  const login = new LoginPage(page);
  await login.open();
  await login.signIn({ email: 'demo@webpilot.test', password: process.env.E2E_PASSWORD ?? '' });
}

test('the dashboard counts open orders', async ({ page }) => {
  await signedIn(page);
  await expect(page.getByText(/You have \d+ open orders/)).toBeVisible();
});
