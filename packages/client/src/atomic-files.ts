/**
 * Files replaced atomically: the new content goes to a partial file beside the target, is
 * fsynced, and is renamed over the target (rename(2) is atomic on POSIX file systems), so a reader
 * or a crash sees either the old file whole or the new one whole. `mirror` writes every day file
 * and its state this way; `sync` its checkpoint and, at the end, its output file.
 */
import { open, readFile, rename } from "node:fs/promises";

/** The text of the file at `path`, or undefined when there is none (any other failure throws). */
export async function readTextIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** The partial file `path` is written to before it is renamed into place. */
export function partialPath(path: string): string {
  return `${path}.partial`;
}

/**
 * Lets `write` fill `path`'s partial file, fsyncs it and renames it over `path`.
 * @example await replaceAtomically("out.csv", (partial) => writeFile(partial, text));
 */
export async function replaceAtomically(
  path: string,
  write: (partial: string) => Promise<void>,
): Promise<void> {
  const partial = partialPath(path);
  await write(partial);
  const handle = await open(partial, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(partial, path);
}

/**
 * Replaces `path` with `text` atomically (mode `mode` for a new file).
 * @example await writeTextAtomically("state.json", JSON.stringify(state));
 */
export function writeTextAtomically(path: string, text: string, mode = 0o644): Promise<void> {
  return replaceAtomically(path, async (partial) => {
    const handle = await open(partial, "w", mode);
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
  });
}

/** fsync of a directory makes a rename in it durable (POSIX); not possible on every platform. */
export async function syncDirectory(path: string): Promise<void> {
  try {
    const handle = await open(path, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Windows cannot open a directory for fsync; the rename itself is still atomic there.
  }
}
