// Pictures and vision model folders that sit beside each other: the pictures a vision folder's
// tensor view offers to run on (in the folder and the folder it sits in), and the vision folders a
// picture's picker offers first (the picture's own folder when it is one, and the folders beside
// the picture). Read with VS Code's file system, one directory listing each, not a search.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { modelTypeOf, SUPPORTED_VISION_TYPES } from '../core/model/config';

const PICTURE = /\.(png|jpe?g)$/i;

/** A `model_type` of a vision family (config.ts: SUPPORTED_VISION_TYPES). */
export function isVisionType(modelType: string): boolean {
  return (SUPPORTED_VISION_TYPES as readonly string[]).includes(modelType);
}

/** config.json's model_type names a vision family. */
export function isVisionConfig(text: string): boolean {
  const type = modelTypeOf(text);
  return type !== undefined && isVisionType(type);
}

/** The pictures in `folder` and in the folder it sits in, by path, in name order. */
export async function picturesBeside(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const directory of [folder, path.dirname(folder)]) {
    const names = (await entries(directory)).filter(([name, type]) => type === vscode.FileType.File && PICTURE.test(name)).map(([name]) => name);
    found.push(...names.sort().map((name) => path.join(directory, name)));
  }
  return found;
}

/** The picture's own folder when it is a vision model, then the vision folders beside the picture, by path. */
export async function visionFoldersBeside(picture: string): Promise<string[]> {
  const directory = path.dirname(picture);
  const folders = (await entries(directory)).filter(([, type]) => type === vscode.FileType.Directory).map(([name]) => path.join(directory, name));
  const vision: string[] = [];
  for (const folder of [directory, ...folders.sort()]) if (await isVisionFolder(folder)) vision.push(folder);
  return vision;
}

/** `folder` has a config.json naming a vision family. */
export async function isVisionFolder(folder: string): Promise<boolean> {
  try {
    return isVisionConfig(new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(path.join(folder, 'config.json')))));
  } catch {
    return false; // no config.json: not a model folder
  }
}

async function entries(directory: string): Promise<[string, vscode.FileType][]> {
  try {
    return await vscode.workspace.fs.readDirectory(vscode.Uri.file(directory));
  } catch {
    return []; // unreadable: nothing offered from it
  }
}
