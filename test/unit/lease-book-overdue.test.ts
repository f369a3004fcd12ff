import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConsumeMessage } from 'amqplib';
import type { Link } from '../../shared/adapters/frontier/rabbitmq/broker-link.js';
import { LeaseBook, type Delivery } from '../../shared/adapters/frontier/rabbitmq/lease-book.js';
import type { TaskMessage } from '../../shared/adapters/frontier/rabbitmq/task-message.js';
import { LevelPicker } from '../../shared/adapters/frontier/level-picker.js';

const link = { alive: true, generation: 1 } as unknown as Link;
let tag = 0;

function delivery(url: string, receivedAtMs: number): Omit<Delivery, 'seq'> {
  tag += 1;
  return {
    link,
    message: { fields: { deliveryTag: tag } } as unknown as ConsumeMessage,
    task: { runId: 'r', url, host: 'h', attempt: 1 } as TaskMessage,
    taskId: `t${tag}`,
    priority: 0,
    receivedAtMs,
  };
}

const urls = (list: readonly Delivery[]): string[] => list.map((d) => d.task.url).sort();

describe('LeaseBook.takeOverdue', () => {
  test('hands back each expired lease and each delivery held too long, and nothing before', () => {
    const book = new LeaseBook('tok');
    const picker = new LevelPicker();
    book.add(delivery('a', 1_000));
    book.add(delivery('b', 2_000));
    const [a] = book.take(1, new Set(), new Set(), link, 5_000, picker);
    assert.equal(a?.task.url, 'a');

    let due = book.takeOverdue(4_999, 999);
    assert.deepEqual([urls(due.expired), urls(due.tooOld)], [[], []]);
    due = book.takeOverdue(5_000, 999);
    assert.deepEqual([urls(due.expired), urls(due.tooOld)], [['a'], []]);
    due = book.takeOverdue(5_000, 2_000);
    assert.deepEqual([urls(due.expired), urls(due.tooOld)], [[], []], 'b arrived at 2,000: not before it');
    due = book.takeOverdue(5_000, 2_001);
    assert.deepEqual([urls(due.expired), urls(due.tooOld)], [[], ['b']]);
    assert.equal(book.held, 0);
  });

  test('a lease back from settling is seen by the next call, though a scan ran while it settled', () => {
    const book = new LeaseBook('tok');
    const picker = new LevelPicker();
    book.add(delivery('c', 1_000));
    const [c] = book.take(1, new Set(), new Set(), link, 3_000, picker);
    assert.ok(c);
    const held = book.claim(c);
    assert.ok(held);
    // A scan finds nothing leased or buffered: it learns nothing is due until something comes in.
    assert.deepEqual(book.takeOverdue(2_000, 0), { expired: [], tooOld: [] });
    book.unclaim(held);
    assert.deepEqual(urls(book.takeOverdue(3_000, 0).expired), ['c'], 'the lease expired at 3,000');
    book.add(delivery('d', 4_000));
    assert.deepEqual(urls(book.takeOverdue(3_000, 4_001).tooOld), ['d']);
  });

  test('a delivery set aside and buffered again is handed back when it is too old', () => {
    const book = new LeaseBook('tok');
    book.add(delivery('e', 1_000));
    const [parked] = book.takeToPark(link, () => 500);
    assert.ok(parked);
    assert.deepEqual(
      book.takeOverdue(0, 5_000),
      { expired: [], tooOld: [] },
      'being set aside: not in the scan',
    );
    book.unpark(parked.delivery);
    assert.deepEqual(urls(book.takeOverdue(0, 5_000).tooOld), ['e']);
  });
});
