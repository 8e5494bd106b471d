const { expect } = require('@playwright/test');

/** Signs in as the configured user; the password is never in the repository. */
async function signIn(page, { user = process.env.E2E_USER, password = process.env.E2E_PASSWORD } = {}) {
  await page.goto('/login');
  await page.getByLabel('Email').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText(process.env.GREETING);
}

module.exports = { signIn };
