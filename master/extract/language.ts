import { detectAll } from 'tinyld';

/** Below this many letters a detection is a guess; the page's own `lang` is used instead. */
const MIN_LETTERS = 80;
/** tinyld reads this much; more text costs time and does not change the answer. */
const SAMPLE_CHARS = 1_500;

/**
 * The language of a page: tinyld's detection on its main text when there is enough of it and
 * the detection is confident, else the primary subtag of the page's `lang` declaration
 * (`en-GB` → `en`), else null. Declarations are often a template's default, so the text wins.
 */
export function pageLanguage(mainText: string, declared: string | null): string | null {
  const sample = mainText.slice(0, SAMPLE_CHARS);
  if (countLetters(sample) >= MIN_LETTERS) {
    const best = detectAll(sample)[0];
    if (best && best.accuracy >= 0.5 && /^[a-z]{2}$/.test(best.lang)) return best.lang;
  }
  return primarySubtag(declared);
}

const NOT_LETTERS = /\P{L}+/gu;

function countLetters(text: string): number {
  return text.replace(NOT_LETTERS, '').length;
}

export function primarySubtag(tag: string | null): string | null {
  const primary = tag?.trim().toLowerCase().split(/[-_]/)[0];
  return primary && /^[a-z]{2,3}$/.test(primary) ? primary : null;
}
