import { test } from '@playwright/test';
import { givenIAmOnTheLoginPage, whenILogInAs, thenISeeTheMessage } from '../steps/login.steps';

test.describe('Feature: Login', () => {
  test('Scenario: a valid user logs in', async ({ page }) => {
    await givenIAmOnTheLoginPage(page);
    await whenILogInAs(page, 'tomsmith', 'SuperSecretPassword!');
    await thenISeeTheMessage(page, 'You logged into a secure area!');
  });

  test('Scenario: an unknown user is told so', async ({ page }) => {
    await givenIAmOnTheLoginPage(page);
    await whenILogInAs(page, 'someone', 'whatever');
    await thenISeeTheMessage(page, 'Your username is invalid!');
  });
});
