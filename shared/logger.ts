import { pino, type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  name: string;
  level?: string;
  /** Where log lines go; stderr by default so stdout stays free for results. */
  destination?: number;
}

/** One root logger per process; modules take `logger.child({ module })`. Secrets are redacted. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      base: { pid: process.pid, role: options.name },
      redact: {
        paths: [
          'token',
          '*.token',
          'password',
          '*.password',
          'secretKey',
          '*.secretKey',
          's3SecretKey',
          '*.s3SecretKey',
          'authorization',
          // A SQL store URL may hold user:password (log describeSqlUrl(url) instead).
          'sqlUrl',
          '*.sqlUrl',
          // Proxy URLs may carry user:pass; what should be seen is logged redacted (redactProxyUrl).
          'proxies',
          '*.proxies',
          '*.*.proxies',
          // A crawl's request headers (the `headers` setting) may carry an API key or a login.
          'headers',
          '*.headers',
          '*.*.headers',
          // The crawl's own cookies (the `cookies` setting) are a login's.
          'cookies',
          '*.cookies',
          '*.*.cookies',
        ],
        censor: '[redacted]',
      },
    },
    pino.destination({ fd: options.destination ?? 2, sync: false }),
  );
}

/** A logger that drops everything, for tests and for library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
