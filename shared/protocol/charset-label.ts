import { labelToName } from '@exodus/bytes/encoding.js';
import { z } from 'zod';

/**
 * A charset to decode pages that name none and are not valid UTF-8 (browsers use the locale's:
 * windows-1252 in most, GBK in Chinese ones). Any WHATWG label (`gbk`, `gb2312`, `big5`,
 * `shift_jis`, `euc-kr`, `windows-1251`, …), stored as the encoding's name.
 */
export const defaultCharsetSchema = z
  .string()
  .trim()
  .min(1)
  .max(40)
  .transform((label, ctx) => {
    const name = labelToName(label);
    if (name === null || name === 'replacement' || name.startsWith('UTF-16')) {
      ctx.addIssue({
        code: 'custom',
        message: `"${label}" is not a charset a page can default to (try gbk, big5, shift_jis, euc-kr, windows-1251)`,
      });
      return z.NEVER;
    }
    return name;
  });

export const DEFAULT_FALLBACK_CHARSET = 'windows-1252';
