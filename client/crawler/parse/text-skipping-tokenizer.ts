import { Tokenizer, TokenizerMode } from 'parse5';

/** What `Preprocessor.advance()` returns at the end of the input. */
const EOF = -1;

/**
 * parse5's spec-compliant HTML tokenizer, made blind to text content so that it is fast enough to
 * scan every crawled page for tags.
 *
 * parse5 consumes input one code point per state-machine step, text included. Text is most of a page
 * and a link extractor ignores it, so in the text states (data, RCDATA, RAWTEXT, script data) we jump
 * from the current character straight to before the next `<`, found with `indexOf`; in PLAINTEXT,
 * which no tag can end, to the end. Only text is skipped: every `<` goes through the real state
 * machine, so tags, comments, end-of-script detection and attribute decoding stay exactly parse5's.
 * This makes tag scanning about four times faster on a typical page (see
 * `scripts/bench/link-extractor.ts`).
 *
 * What a caller loses: character tokens carry only fragments of the text, and source locations and
 * parse errors inside skipped text are not reported. It relies on two public fields of parse5's
 * `Preprocessor` (`html`, `pos`) and on the text states' protected handlers, so the unit tests compare
 * its tag stream with an unmodified `Tokenizer`'s to catch a parse5 upgrade that changes them.
 *
 * Write the whole document with `write(html, true)`: skipping is only safe when no later chunk can
 * complete a token at the end of the buffer.
 */
export class TextSkippingTokenizer extends Tokenizer {
  protected override _stateData(cp: number): void {
    super._stateData(cp);
    if (cp !== EOF && this.state === TokenizerMode.DATA) this.skipToNextTagOpen();
  }

  protected override _stateRcdata(cp: number): void {
    super._stateRcdata(cp);
    if (cp !== EOF && this.state === TokenizerMode.RCDATA) this.skipToNextTagOpen();
  }

  protected override _stateRawtext(cp: number): void {
    super._stateRawtext(cp);
    if (cp !== EOF && this.state === TokenizerMode.RAWTEXT) this.skipToNextTagOpen();
  }

  protected override _stateScriptData(cp: number): void {
    super._stateScriptData(cp);
    if (cp !== EOF && this.state === TokenizerMode.SCRIPT_DATA) this.skipToNextTagOpen();
  }

  protected override _statePlaintext(cp: number): void {
    super._statePlaintext(cp);
    if (cp !== EOF) this.preprocessor.pos = this.preprocessor.html.length - 1;
  }

  /**
   * Positions the preprocessor just before the next `<` (or the end), so that its next `advance()`
   * reads that `<`. The skipped characters are text in every state this is called from, so carriage-
   * return folding and line counting, which the preprocessor does as it advances, do not matter.
   */
  private skipToNextTagOpen(): void {
    const preprocessor = this.preprocessor;
    const next = preprocessor.html.indexOf('<', preprocessor.pos + 1);
    preprocessor.pos = (next === -1 ? preprocessor.html.length : next) - 1;
  }
}
