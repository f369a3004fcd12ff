import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The payload as the independent Standard Webhooks implementation verified it; null if it did not. */
  verified: { type: string; timestamp: string; data: Record<string, unknown> } | null;
  verifyError: string | null;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

/**
 * A webhook receiver on 127.0.0.1 that verifies every request with the `standardwebhooks`
 * package (not ackcrawl's code) and answers from a script: the next scripted answer, or 200.
 */
export async function startReceiver(): Promise<{
  url: string;
  received: Received[];
  /** The endpoint's secret, once the master made it. */
  secret: string | null;
  answers: Answer[];
  close(): Promise<void>;
}> {
  const state = { secret: null as string | null, answers: [] as Answer[], received: [] as Received[] };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      let verified: Received['verified'] = null;
      let verifyError: string | null = null;
      try {
        if (state.secret === null) throw new Error('no secret yet');
        verified = new Webhook(state.secret).verify(body, {
          'webhook-id': String(req.headers['webhook-id']),
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        }) as Received['verified'];
      } catch (err) {
        verifyError = (err as Error).message;
      }
      state.received.push({ headers: req.headers, body, verified, verifyError });
      const answer = state.answers.shift() ?? { status: 200 };
      res.writeHead(answer.status, answer.headers ?? {});
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    get received() {
      return state.received;
    },
    get secret() {
      return state.secret;
    },
    set secret(value: string | null) {
      state.secret = value;
    },
    get answers() {
      return state.answers;
    },
    set answers(value: Answer[]) {
      state.answers = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
