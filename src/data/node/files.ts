/**
 * Paths as the readers and writers meet them (Node only): whether a path names a regular file,
 * and what the file system said, in words a user understands. Every refusal is one line naming
 * the path.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { DataFormatError } from '../../errors.js';

/** An OS error code in words. */
export function describeOsError(code: string | undefined): string {
  switch (code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'ENOTDIR':
      return 'a component of the path is not a directory';
    case 'EACCES':
      return 'permission denied';
    case 'EPERM':
      return 'operation not permitted (an immutable or append-only file or directory?)';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EROFS':
      return 'read-only file system';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    case 'ENAMETOOLONG':
      return 'file name too long';
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files';
    case 'EIO':
      return 'input/output error';
    case 'EFBIG':
      return 'file too large';
    case 'EBUSY':
      return 'device or resource busy';
    case 'ETXTBSY':
      return 'text file busy';
    case 'EXDEV':
      return 'not on the same file system';
    case 'EEXIST':
      return 'file exists';
    case 'EINVAL':
      return 'invalid argument';
    default:
      return code === undefined ? 'unknown error' : code;
  }
}

/** What a file system entry is, in words (for messages about a path that is not a regular file). */
export function nodeKind(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/** A `DataFormatError` for a file that cannot be opened, in words a user understands. */
export function openError(path: string, error: unknown): DataFormatError {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return new DataFormatError(path, 'no such file');
  if (code === 'EISDIR') return new DataFormatError(path, 'is a directory, not a data file');
  if (code === 'EACCES' || code === 'EPERM') return new DataFormatError(path, 'permission denied');
  return new DataFormatError(path, `cannot be read (${error instanceof Error ? error.message : String(error)})`);
}

/** Opens `path` for reading; a refusal is `openError`'s one line naming the path. */
export async function openForReading(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r');
  } catch (error) {
    throw openError(path, error);
  }
}

/**
 * Checks that `path` is a regular file (a clear error otherwise) and returns its size. Devices,
 * FIFOs and sockets are refused: the readers read a file more than once (a type-guessing sample,
 * then the data), and a device such as /dev/zero never ends.
 */
export async function requireFile(path: string): Promise<number> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw openError(path, error);
  }
  if (info.isDirectory()) throw new DataFormatError(path, 'is a directory, not a data file');
  if (!info.isFile()) throw new DataFormatError(path, `is ${nodeKind(info)}, not a regular file (dpfit reads files, not devices or pipes)`);
  return info.size;
}
