import { test as setup, expect } from '@playwright/test';
import { STORAGE_STATE } from '../playwright.config';
import { demoUser } from '../e2e-utils/credentials';

setup('authenticate', async ({ page }) => {
  const { email, password } = demoUser();
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/dashboard');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(/^Welcome back/);
  await page.context().storageState({ path: STORAGE_STATE });
});
