/**
 * Five-field cron schedules as PingSource takes them (minute hour day-of-month month day-of-week;
 * `*`, numbers, lists, ranges, steps and the @hourly-style shorthands), evaluated in UTC.
 */

const SHORTHANDS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};
const RANGES: [number, number][] = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 6]];

function field(text: string, [min, max]: [number, number]): Set<number> {
  const values = new Set<number>();
  for (const part of text.split(",")) {
    const [range, stepText] = part.split("/");
    const step = stepText === undefined ? 1 : Number(stepText);
    let [lo, hi] = range === "*" ? [min, max] : range!.split("-").map(Number) as [number, number?];
    hi ??= stepText === undefined ? lo : max;
    if (![lo, hi, step].every(Number.isInteger) || lo! < min || hi > max || lo! > hi || step < 1) throw new Error(`invalid cron field "${text}"`);
    for (let v = lo!; v <= hi; v += step) values.add(v);
  }
  return values;
}

export interface Schedule {
  matches(date: Date): boolean;
}

export function parseSchedule(expression: string): Schedule {
  const parts = (SHORTHANDS[expression.trim()] ?? expression).trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`cron schedule "${expression}" must have 5 fields`);
  const [minute, hour, dom, month, dow] = parts.map((p, i) => field(p, RANGES[i]!));
  return {
    matches: (d) =>
      minute!.has(d.getUTCMinutes()) && hour!.has(d.getUTCHours()) && dom!.has(d.getUTCDate()) && month!.has(d.getUTCMonth() + 1) && dow!.has(d.getUTCDay()),
  };
}

/** The first minute strictly after `from` that the schedule matches. */
export function nextRun(schedule: Schedule, from: Date): Date {
  const t = new Date(from);
  t.setUTCSeconds(0, 0);
  for (let i = 0; i < 366 * 24 * 60; i++) {
    t.setUTCMinutes(t.getUTCMinutes() + 1);
    if (schedule.matches(t)) return new Date(t);
  }
  throw new Error("the schedule never fires within a year");
}
