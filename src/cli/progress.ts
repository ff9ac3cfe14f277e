/**
 * A progress bar on stderr for long work, shown only when stderr is a terminal (never mixed into
 * --json output on stdout, DESIGN.md "CLI contract").
 */
export function progressReporter(label: string, enabled: boolean): ((done: number, total: number) => void) | undefined {
  if (!enabled || !process.stderr.isTTY) return undefined;
  let last = -1;
  return (done, total) => {
    const percent = Math.floor((100 * done) / total);
    if (percent === last) return;
    last = percent;
    const width = 30;
    const filled = Math.round((width * done) / total);
    process.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${percent}%${done === total ? '\n' : ''}`);
  };
}
