// Types of system.mjs for the TypeScript that imports it (the benches).
import type { ChildProcess, SpawnOptions, SpawnSyncOptions } from 'node:child_process';

export function ensureDebianPackages(names: string[]): void;
export function runOrThrow(command: string, args: string[], options?: SpawnSyncOptions): void;
export function spawnGroup(command: string, args: string[], options?: SpawnOptions): ChildProcess;
export function stopGroup(child: ChildProcess, graceMs?: number): Promise<void>;
export function atExit(task: () => void): void;
