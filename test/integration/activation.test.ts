// The extension loads in a real VS Code: it activates without throwing and every command its
// manifest contributes is registered by activate().
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

const extensionId = 'attention-lens.attention-lens';

interface ContributedCommand {
  command: string;
}

describe('activation', () => {
  it('activates the extension under development', async () => {
    const extension = vscode.extensions.getExtension(extensionId);
    assert.ok(extension, `${extensionId} is not loaded`);
    await extension.activate();
    assert.equal(extension.isActive, true);
  });

  it('registers every command the manifest contributes', async () => {
    const extension = vscode.extensions.getExtension(extensionId);
    assert.ok(extension);
    await extension.activate();
    const contributed: ContributedCommand[] = extension.packageJSON.contributes?.commands ?? [];
    assert.ok(contributed.length > 0, 'the manifest contributes no commands');
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.map((entry) => entry.command).filter((id) => !registered.has(id));
    assert.deepEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
  });
});
