/**
 * Token-level F1 of an extracted text against a hand-labelled one, as in the usual
 * article-extraction benchmarks (ScrapingHub's article-extraction-benchmark, trafilatura's
 * evaluation): both texts become bags of words (lower-cased runs of letters and digits), and
 * precision = |extracted ∩ labelled| / |extracted|, recall = |extracted ∩ labelled| / |labelled|,
 * with the intersection counted per word as the smaller of the two counts.
 */
export interface Score {
  precision: number;
  recall: number;
  f1: number;
}

export function tokens(text: string): Map<string, number> {
  const bag = new Map<string, number>();
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    bag.set(match[0], (bag.get(match[0]) ?? 0) + 1);
  }
  return bag;
}

export function tokenF1(extracted: string, labelled: string): Score {
  const got = tokens(extracted);
  const want = tokens(labelled);
  let common = 0;
  let gotTotal = 0;
  let wantTotal = 0;
  for (const n of got.values()) gotTotal += n;
  for (const [word, n] of want) {
    wantTotal += n;
    common += Math.min(n, got.get(word) ?? 0);
  }
  const precision = gotTotal === 0 ? 0 : common / gotTotal;
  const recall = wantTotal === 0 ? 0 : common / wantTotal;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}
