// Types of test-counts.mjs for the TypeScript that imports it (its unit test).
export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
}
export function countTests(lines: string[]): TestCounts | null;
export function skipReasons(lines: string[]): string[];
