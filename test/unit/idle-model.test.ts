// The idle-cost model behind `npm run bench:idle` and the "Idle cost" table of docs/performance.md.
import { describe, expect, it } from "vitest";
import { idleCost, periodicWakeChance, scaling, seconds, ticksPerHour } from "../../bench/idle-model.ts";

describe("the idle-cost model", () => {
  it.each([
    ["6s", 6],
    ["1m", 60],
    ["1m30s", 90],
    ["1h", 3600],
  ])("reads the duration %s as %i s", (d, s) => expect(seconds(d)).toBe(s));

  it.each(["", "10", "5 s", "1d"])("refuses %j as a duration", (d) =>
    expect(() => seconds(d)).toThrow("not a duration"),
  );

  it("takes the window and retention from the annotations, else Knative's defaults", () => {
    expect(
      scaling(
        { "autoscaling.knative.dev/window": "10s", "autoscaling.knative.dev/scale-to-zero-pod-retention-period": "2m" },
        25,
      ),
    ).toEqual({ windowSeconds: 10, retentionSeconds: 120, terminationSeconds: 25 });
    expect(scaling({})).toEqual({ windowSeconds: 60, retentionSeconds: 0, terminationSeconds: 300 });
  });

  it.each([
    ["* * * * *", 60],
    ["*/5 * * * *", 12],
    ["*/15 * * * *", 4],
  ])("counts %s as %i ticks an hour", (s, n) => expect(ticksPerHour(s)).toBe(n));

  it.each(["0 * * * *", "*/7 * * * *", "@hourly"])("refuses to model %s", (s) =>
    expect(() => ticksPerHour(s)).toThrow(),
  );

  it("wakes apply and status on nearly every tick once there are many DynamoPoolRelays", () => {
    expect(periodicWakeChance(0, 6)).toBe(0);
    expect(periodicWakeChance(1, 6)).toBeCloseTo(1 / 6);
    expect(periodicWakeChance(1000, 6)).toBeCloseTo(1);
  });

  it("charges each wake-up its work, the window, up to the grace period, and the drain", () => {
    // 12 x (1 + 10 + 30 drain) and 12 x (1 + 10 + 30 grace + 30 drain)
    expect(idleCost({ windowSeconds: 10, retentionSeconds: 0, terminationSeconds: 300 }, 12, 1)).toEqual({
      wakesPerHour: 12,
      podSeconds: [492, 852],
    });
    // Retention longer than window + grace sets the stay.
    expect(idleCost({ windowSeconds: 10, retentionSeconds: 100, terminationSeconds: 300 }, 12, 1).podSeconds).toEqual([
      12 * 131,
      12 * 131,
    ]);
    expect(idleCost({ windowSeconds: 60, retentionSeconds: 0, terminationSeconds: 300 }, 0, 1).podSeconds).toEqual([
      0, 0,
    ]);
  });

  it("lets a pod go at the end of its termination grace period when that is shorter than the drain", () => {
    // 12 x (1 + 10 + 25) and 12 x (1 + 10 + 30 grace + 25): the status Service's timeoutSeconds.
    expect(idleCost({ windowSeconds: 10, retentionSeconds: 0, terminationSeconds: 25 }, 12, 1).podSeconds).toEqual([
      432, 792,
    ]);
  });

  it("keeps the pod all hour when wake-ups come before it scales down", () => {
    // Every minute: 1 + 60 s of window outlasts the 60 s between ticks.
    expect(idleCost({ windowSeconds: 60, retentionSeconds: 0, terminationSeconds: 300 }, 60, 1).podSeconds).toEqual([
      3600, 3600,
    ]);
    // With 10 s it leaves between ticks, and a draining pod overlaps the next one: more than an hour.
    expect(idleCost({ windowSeconds: 10, retentionSeconds: 0, terminationSeconds: 300 }, 60, 1).podSeconds).toEqual([
      60 * 41,
      60 * 71,
    ]);
  });
});
