import { describe, expect, it } from "vitest";
import { nextRun, parseSchedule } from "./cron.ts";

const at = (iso: string) => new Date(iso);

describe("cron", () => {
  it.each([
    { expr: "* * * * *", from: "2026-01-01T10:00:30Z", next: "2026-01-01T10:01:00.000Z" },
    { expr: "*/5 * * * *", from: "2026-01-01T10:01:00Z", next: "2026-01-01T10:05:00.000Z" },
    { expr: "0 3 * * *", from: "2026-01-01T10:00:00Z", next: "2026-01-02T03:00:00.000Z" },
    { expr: "15,45 8-9 * * 1-5", from: "2026-01-03T09:50:00Z", next: "2026-01-05T08:15:00.000Z" },
    { expr: "@hourly", from: "2026-01-01T10:00:00Z", next: "2026-01-01T11:00:00.000Z" },
  ])("$expr after $from is $next", ({ expr, from, next }) => {
    expect(nextRun(parseSchedule(expr), at(from)).toISOString()).toBe(next);
  });

  it.each(["* * * *", "61 * * * *", "*/0 * * * *", "5-1 * * * *", "@every 1m"])("rejects %s", (expr) => {
    expect(() => parseSchedule(expr)).toThrow();
  });
});
