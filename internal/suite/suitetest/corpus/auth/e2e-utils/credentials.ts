export interface Credentials {
  readonly email: string;
  readonly password: string;
}

export function demoUser(): Credentials {
  const password = process.env.E2E_PASSWORD;
  if (!password) throw new Error('E2E_PASSWORD is not set');
  return { email: 'demo@webpilot.test', password };
}
