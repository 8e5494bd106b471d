import { type Locator, type Page } from '@playwright/test';

export class SecurePage {
  readonly heading: Locator;
  readonly logout: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole('heading', { name: 'Secure Area', exact: true });
    this.logout = page.getByRole('link', { name: /logout/i });
  }
}
