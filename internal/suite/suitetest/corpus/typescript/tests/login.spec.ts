import { test, expect } from '@playwright/test';
import { LoginPage, Outcome, type Credentials } from '../pages/LoginPage';

const demo: Credentials = { email: 'demo@webpilot.test', password: process.env.E2E_PASSWORD ?? '' };

test('signs in to the dashboard', async ({ page }) => {
  const login = new LoginPage(page);
  await login.open();
  await login.signIn(demo);
  await expect(page).toHaveURL(new RegExp(Outcome.Dashboard + '$'));
});

test('shows an error for a wrong password', async ({ page }) => {
  const login = new LoginPage(page);
  await login.open();
  await login.signIn({ ...demo, password: 'wrong' });
  await expect(login.error).toBeVisible();
  expect(await login.title).toContain('Log in');
});
