const { test, expect } = require('@playwright/test');
test('data url', async ({ page }) => {
  await page.setContent('<h1>Hello</h1><button onclick="console.error(\'boom\')">Go</button>');
  await page.getByRole('button', { name: 'Go' }).click();
  await expect(page.locator('h1'), 'the heading').toHaveText('Hellx', { timeout: 1000 });
});
