/**
 * Replacing a small file so that a reader (or a crash) sees either the old content or the new,
 * whole: write a temporary file beside it, then rename it over the target (rename(2) is atomic
 * within one file system). Used for the key ring and the admin token and address.
 */
import { rename, writeFile } from "node:fs/promises";

/** Replaces `file` with `content` (mode 0600: these files hold secrets) in one rename. */
export async function writeAtomically(file: string, content: string): Promise<void> {
  // The pid keeps two processes sharing a data directory from writing the same temporary file.
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, file);
}
