module.exports = {
  testDir: 'test',
  timeout: 30000,
  use: {
    baseURL: process.env.BASE_URL,
    viewport: { width: 1280, height: 720 },
    ignoreHTTPSErrors: true,
    actionTimeout: 5000,
  },
};
