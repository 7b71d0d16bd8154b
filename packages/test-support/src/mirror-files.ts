/**
 * What an `mdq-client mirror` directory holds, for tests that compare mirrors byte for byte
 * (CONTRACT §6: after any run, the files equal a fresh mirror's).
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** Every file of a mirror but its state (`date=…/records.<ext>`), with its bytes, in name order. */
export async function mirrorFiles(dir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const folder of (await readdir(dir)).sort()) {
    if (!folder.startsWith("date=")) continue;
    for (const file of (await readdir(join(dir, folder))).sort()) {
      files.set(`${folder}/${file}`, await readFile(join(dir, folder, file)));
    }
  }
  return files;
}

/** Asserts that two mirrors hold the same files with the same bytes. */
export async function assertSameMirrorFiles(actual: string, expected: string): Promise<void> {
  const [got, want] = await Promise.all([mirrorFiles(actual), mirrorFiles(expected)]);
  assert.deepEqual([...got.keys()], [...want.keys()]);
  for (const [name, bytes] of want) assert.ok(got.get(name)!.equals(bytes), `${name} differs`);
}
