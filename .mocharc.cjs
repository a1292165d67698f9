// Mocha's settings for the unit tests (`npm run test:unit`). In CI (CI=true, as .ci/run sets it)
// a stray `.only` fails the run instead of quietly running one test.
module.exports = {
  require: ['tsx/cjs'],
  spec: ['test/unit/**/*.test.ts'],
  extension: ['ts'],
  timeout: 20000,
  forbidOnly: Boolean(process.env.CI),
};
