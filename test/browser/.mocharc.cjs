// Mocha's settings for the panel's tests in Chromium (`npm run test:browser`); `.only` fails the run in CI.
module.exports = {
  require: ['tsx/cjs', 'test/browser/chromium.hooks.ts'],
  spec: ['test/browser/**/*.test.ts'],
  extension: ['ts'],
  timeout: 90000,
  slow: 5000,
  forbidOnly: Boolean(process.env.CI),
};
