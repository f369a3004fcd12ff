import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LevelPicker, pickByLevel } from '../../shared/adapters/frontier/level-picker.js';
import { clampLevel, taskLevel } from '../../shared/protocol/task-priority.js';

const all = (): boolean => true;

describe('LevelPicker', () => {
  test('with every level busy, each gets its weight in every 15 picks, the top level first', () => {
    const picker = new LevelPicker();
    const picks = Array.from({ length: 150 }, () => picker.next(all));
    assert.equal(picks[0], 3);
    for (let round = 0; round < 10; round++) {
      const per = [0, 0, 0, 0];
      for (const level of picks.slice(round * 15, round * 15 + 15))
        per[level as number] = (per[level as number] ?? 0) + 1;
      assert.deepEqual(per, [1, 2, 4, 8], `round ${round}`);
    }
  });

  test('no starvation: the lowest level waits at most 15 picks, however much the others hold', () => {
    const picker = new LevelPicker();
    let gap = 0;
    let longest = 0;
    for (let i = 0; i < 10_000; i++) {
      if (picker.next(all) === 0) {
        longest = Math.max(longest, gap);
        gap = 0;
      } else gap += 1;
    }
    assert.ok(longest <= 14, `level 0 waited ${longest} picks`);
    // Two levels busy: the lower one gets 1 in 9.
    const two = new LevelPicker();
    const picks = Array.from({ length: 90 }, () => two.next((l) => l === 3 || l === 0));
    assert.equal(picks.filter((l) => l === 0).length, 10);
  });

  test('a level without work gives its share away; none with work gives null', () => {
    const picker = new LevelPicker();
    assert.equal(
      picker.next(() => false),
      null,
    );
    const picks = Array.from({ length: 6 }, () => picker.next((l) => l === 1));
    assert.deepEqual(picks, [1, 1, 1, 1, 1, 1]);
  });

  test('pickByLevel takes oldest first within a level, in the picker order', () => {
    const taken = pickByLevel(new LevelPicker(), [['l0a', 'l0b'], [], [], ['l3a', 'l3b', 'l3c']], 5);
    assert.deepEqual(taken, ['l3a', 'l3b', 'l3c', 'l0a', 'l0b']);
    assert.deepEqual(pickByLevel(new LevelPicker(), [['a'], [], [], []], 0), []);
  });

  test('rejects weights that are not positive', () => {
    assert.throws(() => new LevelPicker([]), RangeError);
    assert.throws(() => new LevelPicker([1, 0]), RangeError);
  });
});

describe('taskLevel', () => {
  test('breadth-first: the run priority for seeds, one level lower per step, clamped', () => {
    const run = { priority: 3, priorityRule: 'breadth-first' } as const;
    assert.deepEqual(
      [0, 1, 2, 3, 4, 50].map((d) => taskLevel(run, d)),
      [3, 2, 1, 0, 0, 0],
    );
  });

  test('depth-first: deeper first, up to the run priority', () => {
    const run = { priority: 3, priorityRule: 'depth-first' } as const;
    assert.deepEqual(
      [0, 1, 2, 3, 9].map((d) => taskLevel(run, d)),
      [0, 1, 2, 3, 3],
    );
    assert.deepEqual(
      [0, 2, 3].map((d) => taskLevel({ priority: 1, priorityRule: 'depth-first' }, d)),
      [0, 0, 1],
    );
  });

  test('fifo: the run priority only', () => {
    for (const depth of [0, 1, 7]) assert.equal(taskLevel({ priority: 2, priorityRule: 'fifo' }, depth), 2);
  });

  test('a higher run priority never lowers a task, whatever the rule and depth', () => {
    for (const rule of ['breadth-first', 'depth-first', 'fifo'] as const) {
      for (let depth = 0; depth < 6; depth++) {
        for (let p = 0; p < 3; p++) {
          assert.ok(
            taskLevel({ priority: p + 1, priorityRule: rule }, depth) >=
              taskLevel({ priority: p, priorityRule: rule }, depth),
          );
        }
      }
    }
  });

  test('run priorities and odd depths are clamped', () => {
    assert.equal(taskLevel({ priority: 99, priorityRule: 'fifo' }, 0), 3);
    assert.equal(taskLevel({ priority: -4, priorityRule: 'fifo' }, 0), 0);
    assert.equal(taskLevel({ priority: 3, priorityRule: 'breadth-first' }, Number.NaN), 3);
    assert.deepEqual([clampLevel(1.4), clampLevel(2.6), clampLevel(Number.NaN)], [1, 3, 0]);
  });
});
