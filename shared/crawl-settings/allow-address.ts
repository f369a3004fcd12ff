import { isIP } from 'node:net';
import { z } from 'zod';

/** An IP address or a CIDR block (`10.1.2.3`, `10.1.0.0/16`, `fd00::/8`). */
export function isIpOrCidr(value: string): boolean {
  const [ip, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || ip === undefined) return false;
  const family = isIP(ip);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

export const allowAddressSchema = z
  .string()
  .max(64)
  .refine(isIpOrCidr, 'an IP address or CIDR, e.g. 10.1.2.3 or 10.1.0.0/16');
