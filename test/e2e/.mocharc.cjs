// Mocha's settings for the end-to-end tests (`npm run test:e2e`); `.only` fails the run in CI.
module.exports = {
  spec: ['test/e2e/*.e2e.mjs'],
  timeout: 180000,
  exit: true,
  forbidOnly: Boolean(process.env.CI),
};
