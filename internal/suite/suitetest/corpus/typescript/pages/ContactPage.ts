import { expect, type Locator, type Page } from '@playwright/test';
import { BasePage } from './BasePage';

export enum Topic {
  Sales = 'sales',
  Support = 'support',
}

export type Message = {
  name: string;
  email: string;
  topic?: Topic;
  text?: string;
  agree: boolean;
};

export class ContactPage extends BasePage {
  readonly fields: Record<'name' | 'email' | 'text', Locator>;
  readonly topic: Locator;
  readonly agree: Locator;
  readonly confirmation: Locator;

  constructor(page: Page) {
    super(page, '/form');
    this.fields = {
      name: page.locator('#name'),
      email: page.locator('#cemail'),
      text: page.locator('#msg'),
    };
    this.topic = page.locator('select#topic');
    this.agree = page.locator('#agree');
    this.confirmation = page.locator('#done');
  }

  async send(m: Message): Promise<void> {
    await this.fields.name.fill(m.name);
    await this.fields.email.fill(m.email);
    if (m.topic) await this.topic.selectOption(m.topic);
    if (m.text) await this.fields.text.fill(m.text);
    if (m.agree) await this.agree.check();
    await this.page.getByRole('button', { name: 'Send message' }).click();
  }

  async expectError(field: 'name' | 'email' | 'agree', text: string | RegExp): Promise<void> {
    await expect(this.page.locator(`#${field}-error`)).toHaveText(text);
  }
}
