import { test, expect } from '@playwright/test';

const form = (page) => ({
  name: page.getByLabel('Full name'),
  email: page.getByLabel('Email address'),
  topic: page.getByLabel('Topic'),
  message: page.getByLabel('Message'),
  terms: page.getByRole('checkbox', { name: /agree to the terms/ }),
  send: page.getByRole('button', { name: 'Send message' }),
});

test.describe('contact form', () => {
  test.beforeEach(async ({ page }) => {
    await page.goto('/form');
  });

  test('sends a complete message', async ({ page }) => {
    const f = form(page);
    await f.name.fill('Ada Lovelace');
    await f.email.fill('ada@example.com');
    await f.topic.selectOption('support');
    await f.message.fill('The engine stopped.');
    await f.terms.check();
    await f.send.click();
    await expect(page.getByRole('status')).toHaveText('Thanks, Ada Lovelace! We will reply about support.');
  });

  test('says what is missing', async ({ page }) => {
    await form(page).send.click();
    await expect(page.locator('#name-error')).toHaveText('Name is required');
    await expect(page.locator('#email-error')).toHaveText(/valid email/);
    await expect(page.locator('#agree-error')).toHaveText('Please accept the terms');
    await expect(page.getByRole('status')).toBeEmpty();
  });

  for (const bad of ['ada', 'ada@', 'ada@example', '@example.com']) {
    test(`refuses the address ${bad}`, async ({ page }) => {
      const f = form(page);
      await f.name.fill('Ada');
      await f.email.fill(bad);
      await f.terms.check();
      await f.send.click();
      await expect(page.locator('#email-error')).toHaveText('Enter a valid email address');
    });
  }
});
