import { test, expect } from '../fixtures/pages';

test.describe('dropdown', () => {
  for (const option of ['Option 1', 'Option 2']) {
    test(`selects ${option}`, async ({ dropdownPage }) => {
      await dropdownPage.open();
      await dropdownPage.choose(option);
      await expect(dropdownPage.select).toHaveValue(option.slice(-1));
    });
  }
});
