import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Link } from '../../shared/adapters/frontier/rabbitmq/broker-link.js';
import { FrontierWriter } from '../../shared/adapters/frontier/rabbitmq/frontier-writer.js';
import { Ledger } from '../../shared/adapters/frontier/rabbitmq/ledger.js';
import type { LeaseBook } from '../../shared/adapters/frontier/rabbitmq/lease-book.js';
import type { OutgoingMessages } from '../../shared/adapters/frontier/rabbitmq/outgoing-messages.js';
import type { Outgoing, Publisher } from '../../shared/adapters/frontier/rabbitmq/publisher.js';
import type { SharedSeen } from '../../shared/adapters/frontier/rabbitmq/shared-seen.js';
import { silentLogger } from '../../shared/logger.js';
import type { NewTask } from '../../shared/protocol/task.js';

const task = (url: string): NewTask => ({
  runId: 'run-1',
  url,
  host: '127.0.0.1',
  depth: 1,
  priority: 0,
  parentUrl: null,
});

/**
 * A shared seen-set in memory, where another scheduler claims `raced` between this one's sort and
 * its claim (both published them).
 */
function memorySeen(raced: readonly string[]): SharedSeen & { claimed: string[] } {
  const owner = new Map<string, string>();
  const claimed: string[] = [];
  return {
    claimed,
    async sort(tasks) {
      return {
        unseen: tasks.filter((t) => !owner.has(t.url)),
        seen: tasks.filter((t) => owner.has(t.url)),
      };
    },
    async claim(tasks) {
      for (const url of raced) if (!owner.has(url)) owner.set(url, 'other');
      const won: NewTask[] = [];
      const lost: NewTask[] = [];
      for (const t of tasks) {
        claimed.push(t.url);
        if (owner.has(t.url)) lost.push(t);
        else {
          owner.set(t.url, 'me');
          won.push(t);
        }
      }
      return { won, lost };
    },
    async forget() {},
    async report() {
      return true;
    },
    async othersCounts() {
      return new Map();
    },
  };
}

/** A publisher whose batches the broker confirms up to `confirmFirst` messages, then fails. */
function failingPublisher(confirmFirst: number): Publisher & { sent: string[][] } {
  const sent: string[][] = [];
  return {
    sent,
    async publish(_link: Link, items: readonly Outgoing[], _op: string, onConfirmed?: (i: number) => void) {
      sent.push(items.map((i) => i.body.toString()));
      for (let i = 0; i < Math.min(confirmFirst, items.length); i++) onConfirmed?.(i);
      if (items.length > confirmFirst) throw new Error('the link dropped before the last confirms');
    },
  } as unknown as Publisher & { sent: string[][] };
}

describe('FrontierWriter, a push that fails half way with a shared seen-set', () => {
  test('the confirmed tasks are claimed in the shared set before the ledger records them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-writer-'));
    const ledger = new Ledger(join(dir, 'ledger.db'), 1, 'uncounted');
    try {
      const seen = memorySeen(['http://127.0.0.1/b']);
      const publisher = failingPublisher(2);
      const writer = new FrontierWriter({
        ledger,
        book: {} as LeaseBook,
        publisher,
        outgoing: {
          fresh: (t: NewTask) => ({ exchange: '', routingKey: 'q', body: Buffer.from(t.url) }),
        } as OutgoingMessages,
        clock: () => 1_000,
        logger: silentLogger(),
        ensureRunQueues: async () => {},
        onQueuesChanged: () => {},
        sharedSeen: seen,
      });
      const link = {} as Link;
      const urls = ['http://127.0.0.1/a', 'http://127.0.0.1/b', 'http://127.0.0.1/c'];

      await assert.rejects(writer.push(link, urls.map(task), undefined), /last confirms/);

      // a and b were confirmed: both claimed, a won (counted here), b lost (counted by the other).
      assert.deepEqual(seen.claimed, ['http://127.0.0.1/a', 'http://127.0.0.1/b']);
      assert.equal(ledger.counts('run-1').total, 1);
      assert.notEqual(ledger.lookup('run-1', 'http://127.0.0.1/b'), undefined);
      assert.equal(ledger.lookup('run-1', 'http://127.0.0.1/c'), undefined);

      // The retried push sends only c, the one the broker never confirmed.
      const retry = failingPublisher(10);
      publisher.publish = retry.publish.bind(retry);
      const accepted = await writer.push(link, urls.map(task), undefined);
      assert.deepEqual(retry.sent, [['http://127.0.0.1/c']]);
      assert.deepEqual(
        accepted.map((t) => t.url),
        ['http://127.0.0.1/c'],
      );
      assert.equal(ledger.counts('run-1').total, 2);
    } finally {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
