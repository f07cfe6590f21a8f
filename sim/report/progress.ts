/**
 * A progress bar on stderr while the policies replay: overall share done, the policies in flight
 * and the elapsed wall time. On a terminal it redraws one line (at most every 100 ms); otherwise
 * it prints one line as each policy finishes. Wall time goes to stderr only, never into results.
 */
export class ProgressBar {
  readonly #labels: readonly string[];
  readonly #total: number;
  readonly #done: number[];
  readonly #stream: NodeJS.WriteStream;
  readonly #started = performance.now();
  #drawnAt = 0;

  constructor(labels: readonly string[], requests: number, stream = process.stderr) {
    this.#labels = labels;
    this.#total = requests;
    this.#done = labels.map(() => 0);
    this.#stream = stream;
  }

  get elapsedSeconds(): number {
    return (performance.now() - this.#started) / 1000;
  }

  update(index: number, completed: number): void {
    const finished = completed >= this.#total && (this.#done[index] as number) < this.#total;
    this.#done[index] = completed;
    if (!this.#stream.isTTY) {
      if (finished) {
        this.#stream.write(
          `  ${this.#labels[index]} done (${this.elapsedSeconds.toFixed(1)} s elapsed)\n`,
        );
      }
      return;
    }
    const now = performance.now();
    if (!finished && now - this.#drawnAt < 100) return;
    this.#drawnAt = now;
    const all = this.#labels.length * Math.max(1, this.#total);
    const share = this.#done.reduce((a, b) => a + b, 0) / all;
    const width = 30;
    const filled = Math.round(share * width);
    const running = this.#labels
      .map((label, i) => ({ label, done: this.#done[i] as number }))
      .filter((p) => p.done > 0 && p.done < this.#total)
      .map((p) => `${p.label} ${p.done}/${this.#total}`)
      .join("  ");
    const bar = `${"#".repeat(filled)}${".".repeat(width - filled)}`;
    this.#stream.write(
      `\r[${bar}] ${(share * 100).toFixed(0).padStart(3)}%  ${running}  ${this.elapsedSeconds.toFixed(1)} s\x1b[K`,
    );
  }

  finish(): void {
    if (this.#stream.isTTY) this.#stream.write("\n");
    this.#stream.write(`replayed in ${this.elapsedSeconds.toFixed(1)} s\n`);
  }
}
