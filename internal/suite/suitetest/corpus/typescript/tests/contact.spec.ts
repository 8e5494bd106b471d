import { test, expect } from '@playwright/test';
import { ContactPage, Topic, type Message } from '../pages/ContactPage';

const valid: Message = { name: 'Grace', email: 'grace@example.com', topic: Topic.Sales, text: 'Quote please', agree: true };

test.describe('contact', () => {
  let contact: ContactPage;

  test.beforeEach(async ({ page }) => {
    contact = new ContactPage(page);
    await contact.open();
  });

  test('confirms a valid message', async () => {
    await contact.send(valid);
    await expect(contact.confirmation).toHaveText(`Thanks, ${valid.name}! We will reply about ${Topic.Sales}.`);
  });

  test('without a topic it speaks of the message', async () => {
    await contact.send({ ...valid, topic: undefined });
    await expect(contact.confirmation).toContainText('about your message');
  });

  const invalid: Array<[keyof Pick<Message, 'name' | 'email'> | 'agree', Partial<Message>, string]> = [
    ['name', { name: '' }, 'Name is required'],
    ['email', { email: 'grace' }, 'Enter a valid email address'],
    ['agree', { agree: false }, 'Please accept the terms'],
  ];
  for (const [field, change, message] of invalid) {
    test(`refuses a message without a valid ${field}`, async () => {
      await contact.send({ ...valid, ...change });
      await contact.expectError(field, message);
      await expect(contact.confirmation).toHaveText('');
    });
  }
});
