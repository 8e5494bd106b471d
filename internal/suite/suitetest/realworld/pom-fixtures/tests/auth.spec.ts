import { test, expect } from '../fixtures/pages';

test('user can sign in', async ({ loginPage, securePage }) => {
  await loginPage.login('tomsmith', 'SuperSecretPassword!');
  await expect(securePage.heading).toBeVisible();
  await expect(loginPage.flash).toContainText('You logged into a secure area!');
});

test('user can sign out again', async ({ loginPage, securePage, page }) => {
  await loginPage.login('tomsmith', 'SuperSecretPassword!');
  await securePage.logout.click();
  await expect(page).toHaveURL(/\/login/);
});

test('wrong password is refused', async ({ loginPage }) => {
  await loginPage.login('tomsmith', 'letmein');
  await expect(loginPage.flash).toContainText('Your password is invalid!');
});
