const { test, expect } = require('@playwright/test');

test('waits for the message', async ({ page }) => {
  await page.setContent('<div id="flash-messages"><div class="flash success" id="flash">You logged in</div></div>' +
    '<form id="checkboxes"><input type="checkbox"><input type="checkbox" checked></form>');
  await page.waitForSelector('.flash.success');
  expect(await page.textContent('#flash')).toContain('logged in');
  expect(await page.isChecked('form#checkboxes input:nth-of-type(2)')).toBe(true);
});
