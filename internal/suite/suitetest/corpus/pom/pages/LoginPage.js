const { expect } = require('@playwright/test');

exports.LoginPage = class LoginPage {
  /**
   * @param {import('@playwright/test').Page} page
   */
  constructor(page) {
    this.page = page;
    this.emailInput = page.locator('#email');
    this.passwordInput = page.locator('#password');
    this.rememberMe = page.getByLabel('Remember me');
    this.signInButton = page.getByRole('button', { name: 'Sign in' });
    this.errorMessage = page.locator('#error');
  }

  async goto() {
    await this.page.goto('/login');
    await expect(this.page).toHaveTitle(/Log in/);
  }

  async login(email, password, { remember = false } = {}) {
    await this.emailInput.fill(email);
    await this.passwordInput.fill(password);
    if (remember) await this.rememberMe.check();
    await this.signInButton.click();
  }
};
