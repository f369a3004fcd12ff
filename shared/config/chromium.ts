import { accessSync, constants } from 'node:fs';

/** Where Debian's `chromium` package puts the browser; render crawlers drive it (never a download). */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/** Null when `path` is an executable file, else what is wrong and how to fix it. */
export function chromiumProblem(path: string): string | null {
  try {
    accessSync(path, constants.X_OK);
    return null;
  } catch {
    return `rendering needs Chromium at ${path}, which is missing or not executable: install Debian's package (apt-get install chromium; scripts/services.sh up does it) or set ACKCRAWL_CHROMIUM_PATH`;
  }
}
