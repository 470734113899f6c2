import { describe, expect, it } from 'vitest';
import { bounded, PartnerListeners } from '../../src/core/isolate.js';

interface Events {
  tick: (n: number) => unknown;
  error: (error: unknown) => unknown;
}

/** A holder whose reports are recorded, as a logger would see them. */
function holder(errorEvent?: 'error') {
  const reports: { what: string; error: unknown }[] = [];
  const held = new PartnerListeners<Events>((what, error) => reports.push({ what, error }), errorEvent);
  return { held, reports };
}

const boom = new Error('boom');

describe('PartnerListeners: a partner function called isolated', () => {
  it('never throws out: a throw or a rejection of a listener goes to the report, and the rest still run', async () => {
    const { held, reports } = holder();
    const seen: number[] = [];
    held.on('tick', () => {
      throw boom;
    });
    held.on('tick', () => Promise.reject(boom));
    held.on('tick', (n) => seen.push(n));
    expect(() => held.emit('tick', 1)).not.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(seen).toEqual([1]);
    expect(reports).toEqual([
      { what: "a 'tick' listener", error: boom },
      { what: "a 'tick' listener", error: boom },
    ]);
  });

  it('a failure goes to the report, then on the error event', () => {
    const { held, reports } = holder('error');
    const told: unknown[] = [];
    held.on('error', (error) => told.push(error));
    held.on('tick', () => {
      throw boom;
    });
    held.emit('tick', 1);
    expect(reports.map((r) => r.error)).toEqual([boom]);
    expect(told).toEqual([boom]);
  });

  it('an error listener that throws falls to the report only: a report cannot loop', async () => {
    const { held, reports } = holder('error');
    const second = new Error('the error listener failed too');
    held.on('error', () => {
      throw second;
    });
    held.on('error', () => Promise.reject(second));
    held.on('tick', () => {
      throw boom;
    });
    held.emit('tick', 1);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(reports.map((r) => [r.what, r.error])).toEqual([
      ["a 'tick' listener", boom],
      ["a 'error' listener", second],
      ["a 'error' listener", second],
    ]);
  });

  it('a report that throws is swallowed too', () => {
    const held = new PartnerListeners<Events>(() => {
      throw new Error('logger down');
    });
    held.on('tick', () => {
      throw boom;
    });
    expect(() => held.emit('tick', 1)).not.toThrow();
  });

  it('a waiting caller collects failures with call and settle, each named as it says', async () => {
    const { held, reports } = holder();
    held.on('tick', () => {
      throw boom;
    });
    held.on('tick', async () => {
      throw boom;
    });
    const step = { failures: [] as unknown[], what: 'a tick listener of t-1' };
    for (const listener of held.listeners('tick')) {
      const pending = held.call('tick', listener, [1], step);
      if (pending) await held.settle('tick', pending, step);
    }
    expect(step.failures).toEqual([boom, boom]);
    expect(reports.map((r) => r.what)).toEqual(['a tick listener of t-1', 'a tick listener of t-1']);
  });

  it('once calls the listener once, and off removes on and once subscriptions alike', () => {
    const { held } = holder();
    const seen: number[] = [];
    const listener = (n: number) => seen.push(n);
    held.once('tick', listener);
    held.emit('tick', 1);
    held.emit('tick', 2);
    held.on('tick', listener);
    held.once('tick', listener);
    held.off('tick', listener);
    held.emit('tick', 3);
    expect(seen).toEqual([1]);
    expect(held.listenerCount('tick')).toBe(0);
  });
});

describe('bounded: partner code awaited within a bound', () => {
  it('resolves with what the work resolved with inside the bound', async () => {
    await expect(
      bounded(
        async () => 7,
        1_000,
        () => new Error('late'),
      ),
    ).resolves.toBe(7);
  });

  it('rejects with the timeout error once the bound passed, marks the run over and drops a late rejection', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let run: { live: boolean } | undefined;
    const late = new Error('late');
    const pending = bounded(
      async (r) => {
        run = r;
        await gate;
        throw new Error('after the bound');
      },
      10,
      () => late,
    );
    await expect(pending).rejects.toBe(late);
    expect(run?.live).toBe(false);
    release();
    await new Promise((resolve) => setTimeout(resolve, 0));
  });

  it('a work that throws at once rejects, never throws out', async () => {
    const work = () => {
      throw boom;
    };
    let result: Promise<unknown> | undefined;
    expect(() => {
      result = bounded(work, 1_000, () => new Error('late'));
    }).not.toThrow();
    await expect(result).rejects.toBe(boom);
  });
});
