const { test, expect } = require('@playwright/test');

const USER = { name: 'tomsmith', password: 'SuperSecretPassword!' };

test.describe('login (legacy selectors)', () => {
  test('logs in', async ({ page }) => {
    await page.goto('/login');
    await page.fill('#username', USER.name);
    await page.fill('#password', USER.password);
    await page.click('button[type="submit"]');
    await page.waitForSelector('.flash.success');
    expect(await page.textContent('#flash')).toContain('You logged into a secure area!');
  });

  test('checkbox 2 starts checked', async ({ page }) => {
    await page.goto('/checkboxes');
    expect(await page.isChecked('form#checkboxes input:nth-of-type(2)')).toBe(true);
  });

  test('dropdown starts unselected', async ({ page }) => {
    await page.goto('/dropdown');
    expect(await page.inputValue('#dropdown')).toBe('');
  });
});
