import type { Locator, Page } from '@playwright/test';
import { BasePage } from './BasePage';

export interface Credentials {
  email: string;
  password: string;
}

export enum Outcome {
  Dashboard = '/dashboard',
  Error = '/login?error=1',
}

export class LoginPage extends BasePage {
  private readonly email: Locator;
  private readonly password: Locator;
  readonly submit: Locator;
  readonly error: Locator;

  constructor(page: Page) {
    super(page, '/login');
    this.email = page.getByLabel('Email');
    this.password = page.getByLabel('Password');
    this.submit = page.getByRole('button', { name: 'Sign in' });
    this.error = page.locator('#error');
  }

  async signIn({ email, password }: Credentials): Promise<void> {
    await this.email.fill(email);
    await this.password.fill(password);
    await this.submit.click();
  }
}
